package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

func TestConnectionSecurityModes(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"a": "pw"}})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"b": "pw"}})
	src.Load(t, "a", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 3, Messages: 10}))
	destination := dovecotSide(dst, "b", "pw")
	for _, tc := range []struct {
		name    string
		server  imapconn.Server
		wantErr string
	}{
		{"implicit TLS, verified", imapconn.Server{Host: src.Host, Port: src.TLSPort, Security: imapconn.SecurityTLS, RootCAs: src.RootCAs()}, ""},
		{"STARTTLS, verified", imapconn.Server{Host: src.Host, Port: src.Port, Security: imapconn.SecurityStartTLS, RootCAs: src.RootCAs()}, ""},
		{"self-signed, verification skipped", imapconn.Server{Host: src.Host, Port: src.TLSPort, Security: imapconn.SecurityTLS, SkipVerify: true}, ""},
		{"self-signed, not trusted", imapconn.Server{Host: src.Host, Port: src.TLSPort, Security: imapconn.SecurityTLS}, "certificate"},
		{"STARTTLS self-signed, not trusted", imapconn.Server{Host: src.Host, Port: src.Port, Security: imapconn.SecurityStartTLS}, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			source := imapconn.Side{Server: tc.server, Login: "a", Password: "pw"}
			_, err := Migrate(context.Background(), Job{Source: source, Destination: destination, Tuning: Tuning{Tries: 3}})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("migration failed: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one about the %s", err, tc.wantErr)
			case tc.wantErr != "" && imapconn.KindOf(err) != imapconn.KindPermanent:
				t.Errorf("an untrusted certificate is %v, want permanent (no retries)", imapconn.KindOf(err))
			}
		})
	}
}

func TestDovecotRefusesAWrongPassword(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.job.Destination.Password = "not-it"
	_, err := Migrate(context.Background(), p.job)
	if imapconn.KindOf(err) != imapconn.KindAuth || !strings.HasPrefix(err.Error(), "destination alice@new at 127.0.0.1:") || !strings.Contains(err.Error(), "uthentication failed") {
		t.Fatalf("error %v, want an authentication failure with the server's text", err)
	}
	if strings.Contains(err.Error(), "not-it") {
		t.Error("the error shows the password")
	}
}

// TestSecuredDestination copies a mailbox of several folders in each of
// the destination's security modes, to a mailbox of its own: the copy is
// exact, and each side takes one login, the MULTIAPPEND commands going
// on the destination's one session (sharedConn), STARTTLS included.
func TestSecuredDestination(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutDotInbox, imaptest.LayoutSlash)
	p.src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 5, Messages: 40}))
	for _, tc := range []struct {
		name, login string
		port        int
		security    imapconn.Security
	}{
		{"plain", "plain@new", p.dst.Port, imapconn.SecurityPlain},
		{"implicit TLS", "tls@new", p.dst.TLSPort, imapconn.SecurityTLS},
		{"STARTTLS", "starttls@new", p.dst.Port, imapconn.SecurityStartTLS},
	} {
		p.dst.AddUser(t, tc.login, "pw")
		job := p.job
		job.State = syncstate.NewMemoryState()
		job.Destination = imapconn.Side{Server: imapconn.Server{Host: p.dst.Host, Port: tc.port, Security: tc.security, RootCAs: p.dst.RootCAs()},
			Login: tc.login, Password: "pw"}
		sourceBefore := p.src.Logins(t, "alice")
		res, err := Migrate(context.Background(), job)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.MessagesCopied != 40 {
			t.Errorf("%s: copied %d, want 40", tc.name, res.MessagesCopied)
		}
		if source, destination := p.src.Logins(t, "alice")-sourceBefore, p.dst.Logins(t, tc.login); source != 1 || destination != 1 {
			t.Errorf("%s: %d source and %d destination logins, want one each", tc.name, source, destination)
		}
		wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, tc.login))
	}
}
