package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

func TestConnectionSecurityModes(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"a": "pw"}})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"b": "pw"}})
	src.Load(t, "a", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 3, Messages: 10}))
	destination := dovecotSide(dst, "b", "pw")
	for _, tc := range []struct {
		name    string
		server  Server
		wantErr string
	}{
		{"implicit TLS, verified", Server{Host: src.Host, Port: src.TLSPort, Security: SecurityTLS, RootCAs: src.RootCAs()}, ""},
		{"STARTTLS, verified", Server{Host: src.Host, Port: src.Port, Security: SecurityStartTLS, RootCAs: src.RootCAs()}, ""},
		{"self-signed, verification skipped", Server{Host: src.Host, Port: src.TLSPort, Security: SecurityTLS, SkipVerify: true}, ""},
		{"self-signed, not trusted", Server{Host: src.Host, Port: src.TLSPort, Security: SecurityTLS}, "certificate"},
		{"STARTTLS self-signed, not trusted", Server{Host: src.Host, Port: src.Port, Security: SecurityStartTLS}, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			source := Side{Server: tc.server, Login: "a", Password: "pw"}
			_, err := Migrate(context.Background(), Job{Source: source, Destination: destination, Tuning: Tuning{Attempts: 3}})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("migration failed: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one about the %s", err, tc.wantErr)
			case tc.wantErr != "" && KindOf(err) != KindPermanent:
				t.Errorf("an untrusted certificate is %v, want permanent (no retries)", KindOf(err))
			}
		})
	}
}

func TestDovecotRefusesAWrongPassword(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.job.Destination.Password = "not-it"
	_, err := Migrate(context.Background(), p.job)
	if KindOf(err) != KindAuth || !strings.HasPrefix(err.Error(), "destination alice@new at 127.0.0.1:") || !strings.Contains(err.Error(), "uthentication failed") {
		t.Fatalf("error %v, want an authentication failure with the server's text", err)
	}
	if strings.Contains(err.Error(), "not-it") {
		t.Error("the error shows the password")
	}
}

// TestSecuredDestination covers the destination's connections, the
// MULTIAPPEND one included, over both TLS modes.
func TestSecuredDestination(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutDotInbox, imaptest.LayoutSlash)
	p.src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 5, Messages: 40}))
	for _, tc := range []struct {
		name     string
		port     int
		security Security
	}{
		{"implicit TLS", p.dst.TLSPort, SecurityTLS},
		{"STARTTLS", p.dst.Port, SecurityStartTLS},
	} {
		job := p.job
		job.Destination.Server = Server{Host: p.dst.Host, Port: tc.port, Security: tc.security, RootCAs: p.dst.RootCAs()}
		if _, err := Migrate(context.Background(), job); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))
}
