package transfer

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// ServerProblem names what keeps a connection to a server, as configured,
// from working; "" is none.
type ServerProblem string

// The problems CheckServer tells apart.
const (
	ProblemNoSuchHost           ServerProblem = "no_such_host"          // the name does not resolve
	ProblemRefused              ServerProblem = "refused"               // nothing listens on the port
	ProblemUnreachable          ServerProblem = "unreachable"           // no answer: a firewall, a wrong address
	ProblemNotTLS               ServerProblem = "not_tls"               // ssl, but the port does not speak TLS
	ProblemTLSExpected          ServerProblem = "tls_expected"          // plain or starttls, but the port speaks TLS
	ProblemUntrustedCertificate ServerProblem = "untrusted_certificate" // self-signed, or a private CA
	ProblemCertificateName      ServerProblem = "certificate_name"      // issued for another name
	ProblemCertificateExpired   ServerProblem = "certificate_expired"   // or not valid yet
	ProblemTLSFailed            ServerProblem = "tls_failed"            // the handshake failed otherwise
	ProblemNoGreeting           ServerProblem = "no_greeting"           // connected, the server says nothing
	ProblemNotIMAP              ServerProblem = "not_imap"              // it says something else
	ProblemGreetingRefused      ServerProblem = "greeting_refused"      // * BYE: busy, or refusing this client
	ProblemNoStartTLS           ServerProblem = "no_starttls"           // starttls, but the server offers none
	ProblemLoginDisabled        ServerProblem = "login_disabled"        // plain, and LOGIN needs TLS first
)

// ServerProblems are every ServerProblem but "".
var ServerProblems = []ServerProblem{ProblemNoSuchHost, ProblemRefused, ProblemUnreachable, ProblemNotTLS,
	ProblemTLSExpected, ProblemUntrustedCertificate, ProblemCertificateName, ProblemCertificateExpired,
	ProblemTLSFailed, ProblemNoGreeting, ProblemNotIMAP, ProblemGreetingRefused, ProblemNoStartTLS, ProblemLoginDisabled}

// ServerCheck is what connecting to a server found, without logging in.
type ServerCheck struct {
	Problem      ServerProblem
	Detail       string // the error's own words, when there is a problem
	Greeting     string // the server's greeting line, without "* OK"
	Capabilities []string
	TLS          *TLSFacts // nil without TLS
}

// TLSFacts describe a server's TLS and certificate.
type TLSFacts struct {
	Version  string // "TLS 1.3"
	Subject  string // the certificate's subject common name
	Issuer   string // its issuer's common name
	DNSNames []string
	NotAfter time.Time
	Verified bool // the certificate is trusted for the host name
}

// CheckServer connects to server as configured, negotiates TLS, reads the
// greeting and the capabilities, and leaves (LOGOUT) without logging in.
// Each step has timeout.
func CheckServer(ctx context.Context, server imapconn.Server, timeout time.Duration) ServerCheck {
	var check ServerCheck
	conn, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", server.Address())
	if err != nil {
		return check.fail(dialProblem(err), err)
	}
	defer conn.Close()
	if server.Security == imapconn.SecurityTLS {
		tlsConn, err := check.handshake(ctx, conn, server, timeout)
		if err != nil {
			return check
		}
		conn = tlsConn
	}
	lines := &lineConn{conn: conn, reader: bufio.NewReader(conn), timeout: timeout}
	if !check.readGreeting(lines) {
		if check.Problem == ProblemNoGreeting && server.Security != imapconn.SecurityTLS && speaksTLS(ctx, server, timeout) {
			check.Problem = ProblemTLSExpected
		}
		return check
	}
	if server.Security == imapconn.SecurityStartTLS {
		if !check.startTLS(ctx, lines, server, timeout) {
			return check
		}
	}
	if check.Capabilities == nil || server.Security == imapconn.SecurityStartTLS {
		caps, err := lines.command("CAPABILITY")
		if err != nil {
			return check.fail(ProblemNotIMAP, err)
		}
		check.Capabilities = caps
	}
	if server.Security == imapconn.SecurityPlain && hasCapability(check.Capabilities, "LOGINDISABLED") {
		check.Problem, check.Detail = ProblemLoginDisabled, "the server announces LOGINDISABLED"
	}
	lines.command("LOGOUT") //nolint:errcheck // leaving; the answer does not matter
	return check
}

func (c *ServerCheck) fail(problem ServerProblem, err error) ServerCheck {
	c.Problem, c.Detail = problem, err.Error()
	return *c
}

// handshake secures conn, recording the certificate whether or not it is
// trusted: an untrusted one is described, then refused unless the server
// is configured to accept any.
func (c *ServerCheck) handshake(ctx context.Context, conn net.Conn, server imapconn.Server, timeout time.Duration) (net.Conn, error) {
	var verifyErr error
	config := server.TLSConfig()
	config.InsecureSkipVerify = true //nolint:gosec // verified below, by hand, to describe what fails
	config.VerifyConnection = func(state tls.ConnectionState) error {
		c.TLS, verifyErr = describeTLS(state, server)
		if verifyErr != nil && !server.SkipVerify {
			return verifyErr
		}
		return nil
	}
	tlsConn := tls.Client(conn, config)
	handshakeCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tlsConn.HandshakeContext(handshakeCtx); err != nil {
		if verifyErr != nil {
			c.fail(certificateProblem(verifyErr), verifyErr)
		} else {
			c.fail(handshakeProblem(err), err)
		}
		return nil, err
	}
	return tlsConn, nil
}

// describeTLS records the negotiated TLS and verifies the certificate for
// the server's host name.
func describeTLS(state tls.ConnectionState, server imapconn.Server) (*TLSFacts, error) {
	facts := &TLSFacts{Version: tls.VersionName(state.Version)}
	if len(state.PeerCertificates) == 0 {
		return facts, errors.New("the server sent no certificate")
	}
	leaf := state.PeerCertificates[0]
	facts.Subject, facts.Issuer = leaf.Subject.CommonName, leaf.Issuer.CommonName
	facts.DNSNames, facts.NotAfter = leaf.DNSNames, leaf.NotAfter
	intermediates := x509.NewCertPool()
	for _, cert := range state.PeerCertificates[1:] {
		intermediates.AddCert(cert)
	}
	_, err := leaf.Verify(x509.VerifyOptions{DNSName: server.Host, Roots: server.RootCAs, Intermediates: intermediates})
	facts.Verified = err == nil
	return facts, err
}

// readGreeting reads the server's first line and any capabilities in it.
func (c *ServerCheck) readGreeting(lines *lineConn) bool {
	line, err := lines.read()
	switch {
	case err != nil:
		c.fail(ProblemNoGreeting, err)
		return false
	case strings.HasPrefix(line, "* BYE"):
		c.Greeting = strings.TrimSpace(strings.TrimPrefix(line, "* BYE"))
		c.Problem, c.Detail = ProblemGreetingRefused, line
		return false
	case !strings.HasPrefix(line, "* OK") && !strings.HasPrefix(line, "* PREAUTH"):
		c.Problem, c.Detail = ProblemNotIMAP, fmt.Sprintf("the server said %.80q", line)
		return false
	}
	c.Greeting = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "* OK"), "* PREAUTH"))
	if rest, ok := strings.CutPrefix(c.Greeting, "[CAPABILITY "); ok {
		if list, text, ok := strings.Cut(rest, "]"); ok {
			c.Capabilities, c.Greeting = strings.Fields(list), strings.TrimSpace(text)
		}
	}
	return true
}

// startTLS upgrades the connection with STARTTLS.
func (c *ServerCheck) startTLS(ctx context.Context, lines *lineConn, server imapconn.Server, timeout time.Duration) bool {
	if c.Capabilities == nil {
		caps, err := lines.command("CAPABILITY")
		if err != nil {
			c.fail(ProblemNotIMAP, err)
			return false
		}
		c.Capabilities = caps
	}
	if !hasCapability(c.Capabilities, "STARTTLS") {
		c.Problem, c.Detail = ProblemNoStartTLS, "STARTTLS is not among the capabilities"
		return false
	}
	if _, err := lines.command("STARTTLS"); err != nil {
		c.fail(ProblemNoStartTLS, err)
		return false
	}
	tlsConn, err := c.handshake(ctx, lines.conn, server, timeout)
	if err != nil {
		return false
	}
	*lines = lineConn{conn: tlsConn, reader: bufio.NewReader(tlsConn), timeout: timeout}
	return true
}

// speaksTLS reports whether the server's port answers a TLS handshake.
func speaksTLS(ctx context.Context, server imapconn.Server, timeout time.Duration) bool {
	conn, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", server.Address())
	if err != nil {
		return false
	}
	defer conn.Close()
	probe := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: server.Host}) //nolint:gosec // only asks whether TLS answers
	handshakeCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return probe.HandshakeContext(handshakeCtx) == nil
}

func dialProblem(err error) ServerProblem {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return ProblemNoSuchHost
	case errors.Is(err, syscall.ECONNREFUSED):
		return ProblemRefused
	}
	return ProblemUnreachable
}

func handshakeProblem(err error) ServerProblem {
	var header tls.RecordHeaderError
	if errors.As(err, &header) {
		return ProblemNotTLS
	}
	return ProblemTLSFailed
}

func certificateProblem(err error) ServerProblem {
	var authority x509.UnknownAuthorityError
	var name x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &authority):
		return ProblemUntrustedCertificate
	case errors.As(err, &name):
		return ProblemCertificateName
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return ProblemCertificateExpired
	}
	return ProblemTLSFailed
}

func hasCapability(caps []string, name string) bool {
	for _, c := range caps {
		if strings.EqualFold(c, name) {
			return true
		}
	}
	return false
}

// lineConn speaks just enough IMAP for the check: tagged commands without
// arguments, and the lines of their answers.
type lineConn struct {
	conn    net.Conn
	reader  *bufio.Reader
	timeout time.Duration
	tag     int
}

func (l *lineConn) read() (string, error) {
	l.conn.SetReadDeadline(time.Now().Add(l.timeout)) //nolint:errcheck // a failed read says it
	line, err := l.reader.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// command sends name and reads up to its tagged answer, returning the
// capabilities an untagged CAPABILITY line listed.
func (l *lineConn) command(name string) ([]string, error) {
	l.tag++
	tag := fmt.Sprintf("c%d", l.tag)
	l.conn.SetWriteDeadline(time.Now().Add(l.timeout)) //nolint:errcheck // a failed write says it
	if _, err := fmt.Fprintf(l.conn, "%s %s\r\n", tag, name); err != nil {
		return nil, err
	}
	var caps []string
	for {
		line, err := l.read()
		if err != nil {
			return nil, err
		}
		if rest, ok := strings.CutPrefix(line, "* CAPABILITY "); ok {
			caps = strings.Fields(rest)
		}
		if answer, ok := strings.CutPrefix(line, tag+" "); ok {
			if !strings.HasPrefix(answer, "OK") {
				return nil, fmt.Errorf("%s: %s", name, answer)
			}
			return caps, nil
		}
	}
}

// ConfigProblem names a failure to connect that no retry fixes, as a
// check of the server would: a certificate this machine does not trust, or
// ssl on a port without TLS; "" for any other error.
func ConfigProblem(err error) ServerProblem {
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return certificateProblem(certErr.Err)
	}
	var header tls.RecordHeaderError
	if errors.As(err, &header) {
		return ProblemNotTLS
	}
	return ""
}
