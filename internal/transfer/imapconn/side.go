package imapconn

import (
	"crypto/x509"
	"net"
	"strconv"

	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// Security says how a connection is secured.
type Security string

// The connection security modes.
const (
	SecurityTLS      Security = "ssl"      // TLS from the first byte (RFC 8314)
	SecurityStartTLS Security = "starttls" // STARTTLS (RFC 9051 §6.2.1)
	SecurityPlain    Security = "plain"    // none
)

// Server is where one side lives.
type Server struct {
	Host       string
	Port       int
	Security   Security
	SkipVerify bool           // accept any certificate
	RootCAs    *x509.CertPool // nil: the system's
}

// Address is the server's host:port.
func (s Server) Address() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Side is one account on one server.
type Side struct {
	Server
	Login    string
	Password string // the account's, or with Master the master's
	// Master, when set, is an administrator who logs in on the account's
	// behalf with Password, as MasterForm says: the account's own password
	// is not needed.
	Master     string
	MasterForm MasterForm
	// Token, when set, logs in with OAuth 2.0: a bearer token it hands
	// out, carried by TokenMechanism (XOAUTH2 when empty). Password is
	// not used.
	Token          TokenSource
	TokenMechanism TokenMechanism
	// Profile is the provider whose limits the server has (transfer/profile.go);
	// ProfileAuto: told from the server.
	Profile provider.Profile
	// Limits are the endpoint's own, in place of its profile's.
	Limits provider.Limits
	// Sieve is the server's ManageSieve, where the account's Sieve
	// scripts are moved from and to.
	Sieve SieveService
}

// MasterForm is how a master login names the account it acts for.
type MasterForm string

const (
	// MasterAuthzid authenticates with SASL PLAIN (RFC 4616): the master
	// as authentication identity, the account as authorization identity
	// (Dovecot, Cyrus, Zimbra, Exchange with FullAccess).
	MasterAuthzid MasterForm = "authzid"
	// MasterSeparator logs in as "account*master" with LOGIN (Dovecot's
	// auth_master_user_separator).
	MasterSeparator MasterForm = "separator"
)

// masterSeparator is Dovecot's usual auth_master_user_separator.
const masterSeparator = "*"

// SieveService is where a server manages its accounts' Sieve scripts
// (filters, vacation replies) over ManageSieve (RFC 5804); Port 0: it
// names none, and scripts are not moved.
type SieveService struct {
	Port int
	// Security: SecurityStartTLS (ManageSieve's usual, on port 4190),
	// SecurityTLS or SecurityPlain.
	Security Security
}
