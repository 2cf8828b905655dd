package migration

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
)

// TLSMode says how a connection to an IMAP server is secured.
type TLSMode string

// The connection security modes of an endpoint.
const (
	TLSModeSSL      TLSMode = "ssl"      // TLS from the first byte (RFC 8314)
	TLSModeSTARTTLS TLSMode = "starttls" // plain, then STARTTLS (RFC 9051 §6.2.1)
	TLSModePlain    TLSMode = "plain"    // no encryption
)

// DefaultPort is the IMAP port a mode uses when an endpoint names none.
func (m TLSMode) DefaultPort() int {
	if m == TLSModeSSL {
		return 993
	}
	return 143
}

// TLSModes are every TLSMode, in the order the API lists them.
var TLSModes = []TLSMode{TLSModeSSL, TLSModeSTARTTLS, TLSModePlain}

func (m TLSMode) valid() bool { return slices.Contains(TLSModes, m) }

// Limits on the text fields of an endpoint.
const (
	MaxLabelBytes = 1024
	MaxHostBytes  = 253 // RFC 1035 §2.3.4, as written in text
)

// Endpoint is an IMAP server that tasks migrate from or to.
type Endpoint struct {
	ID            int64
	RoleLabel     string
	Host          string
	Port          int
	TLSMode       TLSMode
	TLSSkipVerify bool
	// Profile is the provider whose limits the server has; "": ProfileAuto.
	Profile Profile
	// Limits are the endpoint's own, in place of its profile's.
	Limits EndpointLimits
	// Auth is how the accounts log in to this server. On update an
	// empty Method keeps the stored one, whole.
	Auth EndpointAuth
	// Sieve is the server's ManageSieve, where the accounts' Sieve
	// scripts are moved from or to with the same credentials.
	Sieve EndpointSieve
}

// EndpointSieve names an endpoint's ManageSieve service (RFC 5804); Port
// 0: none, and its accounts' scripts are not moved.
type EndpointSieve struct {
	Port int
	// TLSMode: ManageSieve's usual is starttls (port 4190); "" takes it.
	TLSMode TLSMode
}

// DefaultSievePort is ManageSieve's port (RFC 5804 §1.8).
const DefaultSievePort = 4190

func (s *EndpointSieve) normalize() error {
	if s.TLSMode == "" {
		s.TLSMode = TLSModeSTARTTLS
	}
	if !s.TLSMode.valid() {
		return invalid("sieve.tls_mode", "must be ssl|starttls|plain")
	}
	if s.Port < 0 || s.Port > 65535 {
		return invalid("sieve.port", "must be between 1 and 65535 (4190 is ManageSieve's), or 0 for none")
	}
	return nil
}

// EndpointLimits are what an endpoint's server takes where it does not
// announce it, in place of its profile's (provider.Limits); 0: the
// profile's.
type EndpointLimits struct {
	// MaxMessageBytes: the largest message the server takes as a destination.
	MaxMessageBytes int64
	// DailyDownloadBytes and DailyUploadBytes: what one mailbox may read
	// and write over any 24 hours.
	DailyDownloadBytes, DailyUploadBytes int64
	// Connections: at once to the server, every account together;
	// AccountConnections: at once per mailbox.
	Connections, AccountConnections int
}

// MaxEndpointConnections bounds the connection limits an endpoint can set.
const MaxEndpointConnections = 100000

func (l EndpointLimits) check() error {
	for _, f := range []struct {
		name  string
		value int64
	}{{"limits.max_message_bytes", l.MaxMessageBytes}, {"limits.daily_download_bytes", l.DailyDownloadBytes},
		{"limits.daily_upload_bytes", l.DailyUploadBytes}} {
		if f.value < 0 {
			return invalid(f.name, "must be 0 (the profile's) or more")
		}
	}
	for _, f := range []struct {
		name  string
		value int
	}{{"limits.connections", l.Connections}, {"limits.account_connections", l.AccountConnections}} {
		if f.value < 0 || f.value > MaxEndpointConnections {
			return invalid(f.name, "must be between 0 (the profile's) and %d", MaxEndpointConnections)
		}
	}
	return nil
}

// Profile is the provider an endpoint's server belongs to, for the
// limits it does not announce (provider.Profile).
type Profile string

// The profiles, in the order the API lists them.
const (
	ProfileAuto         Profile = "auto"
	ProfileGeneric      Profile = "generic"
	ProfileGmail        Profile = "gmail"
	ProfileMicrosoft365 Profile = "microsoft365"
	ProfileExchange     Profile = "exchange"
)

// Profiles are every Profile.
var Profiles = []Profile{ProfileAuto, ProfileGeneric, ProfileGmail, ProfileMicrosoft365, ProfileExchange}

// AuthMethod is how the accounts of an endpoint log in.
type AuthMethod string

// The authentication methods of an endpoint.
const (
	// AuthPassword: each account with its own password.
	AuthPassword AuthMethod = "password"
	// AuthMaster: one administrator's login acts for every account, which
	// needs no password of its own on this side.
	AuthMaster AuthMethod = "master"
	// AuthOAuth2: OAuth 2.0 bearer tokens from the endpoint's application,
	// with each account's refresh token or for the application alone.
	AuthOAuth2 AuthMethod = "oauth2"
)

// AuthMethods are every AuthMethod, in the order the API lists them.
var AuthMethods = []AuthMethod{AuthPassword, AuthMaster, AuthOAuth2}

// MasterForm is how a master login names the account it acts for.
type MasterForm string

// The forms of a master login.
const (
	// MasterAuthzid: SASL PLAIN with the account as authorization
	// identity (RFC 4616): Cyrus, Zimbra, Exchange, Dovecot.
	MasterAuthzid MasterForm = "authzid"
	// MasterSeparator: LOGIN as "account*master" (Dovecot's
	// auth_master_user_separator), for servers without AUTH=PLAIN.
	MasterSeparator MasterForm = "separator"
)

// MasterForms are every MasterForm, in the order the API lists them.
var MasterForms = []MasterForm{MasterAuthzid, MasterSeparator}

// EndpointAuth is how the accounts of an endpoint log in.
type EndpointAuth struct {
	Method      AuthMethod
	MasterLogin string
	MasterForm  MasterForm
	// MasterPassword is written, never shown: on input an empty one keeps
	// the stored password; reads fill it only for logging in
	// (TaskEndpoints, an attempt's start), and set MasterPasswordSet.
	MasterPassword    Password
	MasterPasswordSet bool
	OAuth2            OAuth2Settings
}

// SharedCredential names what every account of the endpoint logs in
// with, for advice that points at the endpoint: its master login, or its
// OAuth 2.0 application's own token; "" when each account brings its own
// password or refresh token.
func (a EndpointAuth) SharedCredential() string {
	switch {
	case a.Method == AuthMaster:
		return "master login " + a.MasterLogin
	case a.Method == AuthOAuth2 && a.OAuth2.Grant != GrantRefreshToken:
		return "OAuth 2.0 application (" + string(a.OAuth2.Grant) + ")"
	}
	return ""
}

// AccountSecret is what an account must bring to log in on a side.
type AccountSecret string

// The secrets of an account on one side.
const (
	NoSecret           AccountSecret = ""
	SecretPassword     AccountSecret = "password"
	SecretRefreshToken AccountSecret = "refresh_token"
)

// AccountSecret says what each account needs on this endpoint's side:
// its password, its refresh token, or nothing (a master login, an
// application's own token).
func (a EndpointAuth) AccountSecret() AccountSecret {
	switch {
	case a.Method == AuthMaster:
		return NoSecret
	case a.Method == AuthOAuth2 && a.OAuth2.Grant.usesClientSecret():
		return NoSecret
	case a.Method == AuthOAuth2:
		return SecretRefreshToken
	}
	return SecretPassword
}

// normalize checks a and fills in defaults. An empty Method stays empty:
// an update keeps the stored authentication, a new endpoint takes
// passwords (Service.CreateEndpoint).
func (a *EndpointAuth) normalize() error {
	if a.Method == "" {
		return nil
	}
	if !slices.Contains(AuthMethods, a.Method) {
		return invalid("auth.method", "must be password|master|oauth2")
	}
	switch a.Method {
	case AuthPassword:
		*a = EndpointAuth{Method: a.Method}
		return nil
	case AuthOAuth2:
		*a = EndpointAuth{Method: a.Method, OAuth2: a.OAuth2}
		return a.OAuth2.normalize()
	}
	a.OAuth2 = OAuth2Settings{}
	a.MasterLogin = strings.TrimSpace(a.MasterLogin)
	if a.MasterForm == "" {
		a.MasterForm = MasterAuthzid
	}
	switch {
	case !slices.Contains(MasterForms, a.MasterForm):
		return invalid("auth.master_form", "must be authzid|separator")
	case a.MasterLogin == "":
		return invalid("auth.master_login", "must not be empty with the master method")
	case !plainText(a.MasterLogin, MaxLoginBytes):
		return invalid("auth.master_login", "must be UTF-8 without control characters, at most %d bytes", MaxLoginBytes)
	case a.MasterForm == MasterSeparator && strings.Contains(a.MasterLogin, "*"):
		return invalid("auth.master_login", "must not contain * with the separator form, which joins account*master")
	}
	return checkPassword("auth.master_password", a.MasterPassword)
}

// Address is the endpoint's host:port.
func (e Endpoint) Address() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// Normalize checks e and fills in the default port. The spec validates only
// tls_mode; the length and port bounds keep bad input out of the store.
func (e *Endpoint) Normalize() error {
	if !e.TLSMode.valid() {
		return invalid("tls_mode", "must be ssl|starttls|plain")
	}
	if e.Port < 0 || e.Port > 65535 {
		return invalid("port", "must be between 1 and 65535, or 0 for the default of tls_mode")
	}
	if e.Port == 0 {
		e.Port = e.TLSMode.DefaultPort()
	}
	if err := checkText("role_label", e.RoleLabel, MaxLabelBytes); err != nil {
		return err
	}
	if err := checkText("host", e.Host, MaxHostBytes); err != nil {
		return err
	}
	if e.Profile == "" {
		e.Profile = ProfileAuto
	}
	if err := e.Limits.check(); err != nil {
		return err
	}
	if !slices.Contains(Profiles, e.Profile) {
		return invalid("profile", "must be auto|generic|gmail|microsoft365|exchange")
	}
	if err := e.Sieve.normalize(); err != nil {
		return err
	}
	return e.Auth.normalize()
}

// EndpointStore keeps endpoints. Missing ids answer ErrNotFound; deleting an
// endpoint that tasks use answers *EndpointInUseError.
type EndpointStore interface {
	EndpointCreate(ctx context.Context, e Endpoint) (int64, error)
	EndpointGet(ctx context.Context, id int64) (Endpoint, error)
	EndpointList(ctx context.Context) ([]Endpoint, error)
	EndpointUpdate(ctx context.Context, e Endpoint) error
	EndpointDelete(ctx context.Context, id int64) error
}
