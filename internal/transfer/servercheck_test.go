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
	server := func(port int, security Security) Server {
		return Server{Host: "127.0.0.1", Port: port, Security: security}
	}
	trusted := func(s Server) Server { s.RootCAs = d.RootCAs(); return s }
	skipVerify := func(s Server) Server { s.SkipVerify = true; return s }
	for _, tc := range []struct {
		name     string
		server   Server
		want     ServerProblem
		tls      bool // TLS facts expected
		verified bool
	}{
		{"ssl, trusted", trusted(server(d.TLSPort, SecurityTLS)), "", true, true},
		{"starttls, trusted", trusted(server(d.Port, SecurityStartTLS)), "", true, true},
		{"plain", server(d.Port, SecurityPlain), "", false, false},
		{"ssl, self-signed", server(d.TLSPort, SecurityTLS), ProblemUntrustedCertificate, true, false},
		{"starttls, self-signed", server(d.Port, SecurityStartTLS), ProblemUntrustedCertificate, true, false},
		{"ssl, self-signed, accepted", skipVerify(server(d.TLSPort, SecurityTLS)), "", true, false},
		{"ssl on the plain port", server(d.Port, SecurityTLS), ProblemNotTLS, false, false},
		{"plain on the ssl port", server(d.TLSPort, SecurityPlain), ProblemTLSExpected, false, false},
		{"starttls on the ssl port", server(d.TLSPort, SecurityStartTLS), ProblemTLSExpected, false, false},
		{"closed port", server(closed, SecurityTLS), ProblemRefused, false, false},
		{"no such host", Server{Host: "no-such-host.invalid", Port: 993, Security: SecurityTLS}, ProblemNoSuchHost, false, false},
		{"never greets", server(mute.Port, SecurityPlain), ProblemNoGreeting, false, false},
		{"says goodbye", server(bye.Port, SecurityPlain), ProblemGreetingRefused, false, false},
		{"not IMAP", server(ssh.Port, SecurityPlain), ProblemNotIMAP, false, false},
		{"no STARTTLS", server(noStartTLS.Port, SecurityStartTLS), ProblemNoStartTLS, false, false},
		{"LOGIN needs TLS", server(loginDisabled.Port, SecurityPlain), ProblemLoginDisabled, false, false},
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
				if tc.server.Security == SecurityStartTLS && slices.Contains(check.Capabilities, "STARTTLS") {
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
		side := Side{Server: Server{Host: "127.0.0.1", Port: tc.port, Security: SecurityTLS}, Login: "a", Password: "pw"}
		_, err := Migrate(context.Background(), Job{Source: side, Destination: side, Tuning: Tuning{Attempts: 1}})
		if got := ConfigProblem(err); got != tc.want {
			t.Errorf("port %d: problem %q of %v, want %q", tc.port, got, err, tc.want)
		}
	}
	if got := ConfigProblem(errors.New("EOF")); got != "" {
		t.Errorf("another error: %q", got)
	}
}
