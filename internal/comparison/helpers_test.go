package comparison

import (
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

func TestCompareCorpora(t *testing.T) {
	t.Parallel()
	date := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	msg := func(folder, body string, flags ...imap.Flag) imaptest.Message {
		return imaptest.Message{Folder: folder, Flags: flags, Date: date, Body: []byte(body)}
	}
	const a, b = "Subject: a\r\n\r\nfirst\r\n", "Subject: b\r\n\r\nsecond\r\n"
	want := imaptest.Corpus{
		Folders: []imaptest.Folder{{Name: "INBOX", Subscribed: true}, {Name: `\Sent`, Subscribed: true}, {Name: "Empty"}},
		Messages: []imaptest.Message{
			msg("INBOX", a, imap.FlagSeen, "Work"), msg("INBOX", a, imap.FlagSeen, "Work"), msg(`\Sent`, b, imap.FlagSeen),
		},
	}
	tests := []struct {
		name string
		got  imaptest.Corpus
		want string
	}{
		{"identical", want, ""},
		{"keyword and subscription lost, folder renamed, duplicate merged", imaptest.Corpus{
			Folders:  []imaptest.Folder{{Name: "INBOX"}, {Name: "Sent Items", Subscribed: true}, {Name: "Empty"}},
			Messages: []imaptest.Message{msg("INBOX", a, imap.FlagSeen), msg("Sent Items", b, imap.FlagSeen)},
		}, `1 msgs missing, keywords lost (1 msgs), subscriptions lost (1/2), 1 folders renamed (\Sent→Sent Items)`},
		{"header added, flag added, date changed, empty folder missing", imaptest.Corpus{
			Folders: []imaptest.Folder{{Name: "INBOX", Subscribed: true}, {Name: `\Sent`, Subscribed: true}},
			Messages: []imaptest.Message{
				msg("INBOX", a, imap.FlagSeen, "work"), msg("INBOX", "X-TUID: 0123456789ab\r\n"+a, imap.FlagSeen, "Work"),
				{Folder: `\Sent`, Flags: []imap.Flag{imap.FlagSeen, imap.FlagFlagged}, Date: date.Add(time.Hour), Body: []byte(b)},
			},
		}, "bodies altered: X-TUID added (1 msgs), flags added (1 msgs), dates changed (1 msgs), folders missing (1)"},
		{"extra copy", imaptest.Corpus{
			Folders:  want.Folders,
			Messages: append(append([]imaptest.Message{}, want.Messages...), msg(`\Sent`, b, imap.FlagSeen)),
		}, "1 msgs extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := compareCorpora(want, tt.got).String(); got != tt.want {
				t.Errorf("compareCorpora:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestMbsyncPatterns(t *testing.T) {
	t.Parallel()
	// The destination's own Sent, Trash and Junk have no namesake on the
	// source ("Sent Items", …); Drafts and Archive have.
	if got, want := mbsyncPatterns(imaptest.LayoutSlash, imaptest.LayoutDotInbox), "* !Sent !Trash !Junk"; got != want {
		t.Errorf("mbsyncPatterns = %q, want %q", got, want)
	}
	if got, want := mbsyncQuote("!Junk E-mail"), `"!Junk E-mail"`; got != want {
		t.Errorf("mbsyncQuote = %q, want %q", got, want)
	}
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// proc(5): a comm with blanks and a parenthesis; utime 150, stime 50,
	// cutime 200, cstime 100 ticks.
	line := "4242 (imap (x) y) S 1 4000 4000 0 -1 4194560 100 0 0 0 150 50 200 100 20 0 1 0 5 0 0\n"
	s, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if s.comm != "imap (x) y" || s.pgrp != 4000 || s.cpu != 5*time.Second {
		t.Errorf("parseProcStat = %+v, want comm %q, pgrp 4000, cpu 5s", s, "imap (x) y")
	}
	if _, err := parseProcStat("4242 imap S"); err == nil {
		t.Error("parseProcStat accepted a line without (comm)")
	}
}
