package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// TestDestinationProfileLimits: a destination's profile stands for the
// limits its provider does not announce. Into Exchange a message over its
// default 10 MB is not sent: it fails with words naming the limit and
// the profile, the rest is copied. Into Microsoft 365 a folder named Files,
// which it refuses to create, goes to "Files (2)". Told from the host,
// Microsoft 365 needs no profile set.
func TestDestinationProfileLimits(t *testing.T) {
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"ann": "pw"}})
	big := "Subject: big\r\nMessage-ID: <big@test>\r\n\r\n" + strings.Repeat("0123456789abcdef\r\n", 11<<20/18) + "\r\n"
	src.Load(t, "ann", imaptest.Corpus{Folders: []imaptest.Folder{{Name: "Files"}, {Name: "Files/2024"}}, Messages: []imaptest.Message{
		{Folder: "INBOX", Body: gmailRaw(1)}, {Folder: "INBOX", Body: []byte(big)}, {Folder: "Files", Body: gmailRaw(2)}, {Folder: "Files/2024", Body: gmailRaw(3)}}})
	source := imapconn.Side{Server: imapconn.Server{Host: src.Host, Port: src.Port, Security: imapconn.SecurityPlain}, Login: "ann", Password: "pw"}

	t.Run("exchange", func(t *testing.T) {
		dst := startMemServer(t, map[string]string{"ann": "pw"})
		destination := dst.side("ann", "pw")
		destination.Profile = provider.ProfileExchange
		res, err := Migrate(context.Background(), Job{Source: source, Destination: destination, Tuning: Tuning{Tries: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if res.MessagesCopied != 3 || res.MessagesFailed != 1 {
			t.Fatalf("copied %d, failed %d; want 3 copied and the large one failed", res.MessagesCopied, res.MessagesFailed)
		}
		for _, f := range res.Folders {
			if f.Source == "INBOX" && (len(f.Failures) != 1 || !strings.Contains(f.Failures[0].Reason, "larger than Exchange takes by default (10485760 bytes)")) {
				t.Errorf("INBOX failures %+v, want the large message's, naming Exchange's limit", f.Failures)
			}
			// A person is told which message it is: its subject, date and size.
			if f.Source == "INBOX" && len(f.Failures) == 1 &&
				(f.Failures[0].Subject != "big" || f.Failures[0].Size != int64(len(big)) || f.Failures[0].Date.IsZero()) {
				t.Errorf("the large message's failure %+v does not name it (subject big, %d bytes, a date)", f.Failures[0], len(big))
			}
			if f.Source == "Files" && f.Destination != "Files" {
				t.Errorf("Files went to %q; Exchange has no such reserved name", f.Destination)
			}
		}
	})
	t.Run("microsoft365", func(t *testing.T) {
		dst := startMemServer(t, map[string]string{"ann": "pw"})
		destination := dst.side("ann", "pw")
		destination.Profile = provider.ProfileMicrosoft365
		res, err := Migrate(context.Background(), Job{Source: source, Destination: destination, Tuning: Tuning{Tries: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if res.MessagesCopied != 4 { // 11 MB is under Microsoft 365's 35 MB
			t.Errorf("copied %d messages, want 4", res.MessagesCopied)
		}
		want := map[string]string{"Files": "Files (2)", "Files/2024": "Files (2)/2024"}
		for _, f := range res.Folders {
			if w, ok := want[f.Source]; ok && f.Destination != w {
				t.Errorf("%s went to %q, want %q: Microsoft 365 refuses to create Files", f.Source, f.Destination, w)
			}
		}
	})
	for host, want := range map[string]provider.Profile{"outlook.office365.com": provider.ProfileMicrosoft365, "imap.gmail.com": provider.ProfileGmail,
		"OUTLOOK.OFFICE365.COM.": provider.ProfileMicrosoft365, "mail.example.com": provider.ProfileGeneric} {
		if got := provider.DetectProfile(host, false); got != want {
			t.Errorf("DetectProfile(%q) = %q, want %q", host, got, want)
		}
	}
	if got := provider.DetectProfile("imap.example.com", true); got != provider.ProfileGmail {
		t.Errorf("a server with X-GM-EXT-1 is %q, want gmail", got)
	}
}
