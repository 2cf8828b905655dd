package transfer

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// TestCheckServerTellsWhatIsWrong: each way an endpoint can be set up
// wrong against a real Dovecot (and servers that misbehave) is named.
func TestCheckServerTellsWhatIsWrong(t *testing.T) {
	t.Parallel()
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash})
	closed := closedPort(t)
	mute := imaptest.StartMute(t)
	bye := imaptest.StartMuteAfter(t, "* BYE Too many connections from your address\r\n")
	ssh := imaptest.StartMuteAfter(t, "SSH-2.0-OpenSSH_9.2\r\n")
	noStartTLS := imaptest.StartMuteAfter(t, "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n")
	loginDisabled := imaptest.StartMuteAfter(t, "* OK [CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED] ready\r\n")
	server := func(port int, security imapconn.Security) imapconn.Server {
		return imapconn.Server{Host: "127.0.0.1", Port: port, Security: security}
	}
	trusted := func(s imapconn.Server) imapconn.Server { s.RootCAs = d.RootCAs(); return s }
	skipVerify := func(s imapconn.Server) imapconn.Server { s.SkipVerify = true; return s }
	for _, tc := range []struct {
		name     string
		server   imapconn.Server
		want     ServerProblem
		tls      bool // TLS facts expected
		verified bool
	}{
		{"ssl, trusted", trusted(server(d.TLSPort, imapconn.SecurityTLS)), "", true, true},
		{"starttls, trusted", trusted(server(d.Port, imapconn.SecurityStartTLS)), "", true, true},
		{"plain", server(d.Port, imapconn.SecurityPlain), "", false, false},
		{"ssl, self-signed", server(d.TLSPort, imapconn.SecurityTLS), ProblemUntrustedCertificate, true, false},
		{"starttls, self-signed", server(d.Port, imapconn.SecurityStartTLS), ProblemUntrustedCertificate, true, false},
		{"ssl, self-signed, accepted", skipVerify(server(d.TLSPort, imapconn.SecurityTLS)), "", true, false},
		{"ssl on the plain port", server(d.Port, imapconn.SecurityTLS), ProblemNotTLS, false, false},
		{"plain on the ssl port", server(d.TLSPort, imapconn.SecurityPlain), ProblemTLSExpected, false, false},
		{"starttls on the ssl port", server(d.TLSPort, imapconn.SecurityStartTLS), ProblemTLSExpected, false, false},
		{"closed port", server(closed, imapconn.SecurityTLS), ProblemRefused, false, false},
		{"no such host", imapconn.Server{Host: "no-such-host.invalid", Port: 993, Security: imapconn.SecurityTLS}, ProblemNoSuchHost, false, false},
		{"never greets", server(mute.Port, imapconn.SecurityPlain), ProblemNoGreeting, false, false},
		{"says goodbye", server(bye.Port, imapconn.SecurityPlain), ProblemGreetingRefused, false, false},
		{"not IMAP", server(ssh.Port, imapconn.SecurityPlain), ProblemNotIMAP, false, false},
		{"no STARTTLS", server(noStartTLS.Port, imapconn.SecurityStartTLS), ProblemNoStartTLS, false, false},
		{"LOGIN needs TLS", server(loginDisabled.Port, imapconn.SecurityPlain), ProblemLoginDisabled, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check := CheckServer(context.Background(), tc.server, 500*time.Millisecond)
			if check.Problem != tc.want {
				t.Fatalf("problem %q (%s), want %q", check.Problem, check.Detail, tc.want)
			}
			if (check.TLS != nil) != tc.tls || (check.TLS != nil && check.TLS.Verified != tc.verified) {
				t.Errorf("TLS facts %+v, want present %v verified %v", check.TLS, tc.tls, tc.verified)
			}
			if check.TLS != nil && (check.TLS.Subject != "localhost" || !strings.HasPrefix(check.TLS.Version, "TLS 1.") || check.TLS.NotAfter.IsZero()) {
				t.Errorf("certificate facts %+v", check.TLS)
			}
			if tc.want == "" {
				if !slices.Contains(check.Capabilities, "IMAP4rev1") || check.Greeting == "" {
					t.Errorf("capabilities %q, greeting %q", check.Capabilities, check.Greeting)
				}
				if tc.server.Security == imapconn.SecurityStartTLS && slices.Contains(check.Capabilities, "STARTTLS") {
					t.Errorf("capabilities %q after STARTTLS still offer it: read before TLS", check.Capabilities)
				}
			} else if check.Detail == "" {
				t.Error("no detail for the problem")
			}
		})
	}
}

// closedPort is a local port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// TestConfigProblemOfAFailedRun: a run that cannot connect because of a
// certificate or a TLS mode names the problem an endpoint check would.
func TestConfigProblemOfAFailedRun(t *testing.T) {
	t.Parallel()
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"a": "pw"}})
	for _, tc := range []struct {
		port int
		want ServerProblem
	}{
		{d.TLSPort, ProblemUntrustedCertificate},
		{d.Port, ProblemNotTLS},
	} {
		side := imapconn.Side{Server: imapconn.Server{Host: "127.0.0.1", Port: tc.port, Security: imapconn.SecurityTLS}, Login: "a", Password: "pw"}
		_, err := Migrate(context.Background(), Job{Source: side, Destination: side, Tuning: Tuning{Tries: 1}})
		if got := ConfigProblem(err); got != tc.want {
			t.Errorf("port %d: problem %q of %v, want %q", tc.port, got, err, tc.want)
		}
	}
	if got := ConfigProblem(errors.New("EOF")); got != "" {
		t.Errorf("another error: %q", got)
	}
}
