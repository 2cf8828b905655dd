package transfer

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
)

func TestIdentity(t *testing.T) {
	t.Parallel()
	withID := "Message-ID: <abc@example.com>\r\nSubject: hi\r\n"
	refolded := "Message-ID:\r\n <abc@example.com>\r\nSubject: hi\r\n"
	noID := "Date: Mon, 1 Jan 2024 10:00:00 +0000\r\nFrom: a@x\r\nTo: b@x\r\nSubject: hi\r\n"
	noIDOtherSubject := strings.Replace(noID, "hi", "ho", 1)
	if identity([]byte(withID), 10) != identity([]byte(refolded), 10) {
		t.Error("refolding a header changed the identity")
	}
	if identity([]byte(withID), 10) == identity([]byte(withID), 11) {
		t.Error("the size is not part of the identity")
	}
	if !strings.HasPrefix(identity([]byte(withID), 10), "id:<abc@example.com>/") {
		t.Errorf("identity %q does not use the Message-ID", identity([]byte(withID), 10))
	}
	if identity([]byte(noID), 10) == identity([]byte(noIDOtherSubject), 10) {
		t.Error("messages without Message-ID that differ in subject share an identity")
	}
	// Two runs read the same message into different buffers.
	if first, again := []byte(noID), []byte(noID); identity(first, 10) != identity(again, 10) {
		t.Error("identity is not stable")
	}
	if got := identity([]byte("Subject: \xff\xfe 8-bit\r\n"), 3); !strings.HasPrefix(got, "hash:") {
		t.Errorf("8-bit header: %q", got)
	}
}

func TestMultisetKeepsCopies(t *testing.T) {
	t.Parallel()
	m := multiset{"a": 2}
	taken := []bool{m.take("a"), m.take("a"), m.take("a"), m.take("b")}
	if !slices.Equal(taken, []bool{true, true, false, false}) {
		t.Errorf("takes of a, a, a, b from {a: 2}: %v; a multiset of two copies must give exactly two", taken)
	}
}

func TestFlagFilter(t *testing.T) {
	t.Parallel()
	in := []imap.Flag{imap.FlagSeen, `\Recent`, imap.FlagFlagged, "$Forwarded", "Work", `\Unknown`}
	for _, tc := range []struct {
		name      string
		permanent []imap.Flag
		want      string
	}{
		{"keywords allowed", []imap.Flag{imap.FlagSeen, imap.FlagWildcard}, `[\Seen \Flagged $Forwarded Work]`},
		{"only listed keywords", []imap.Flag{imap.FlagSeen, "Work"}, `[\Seen \Flagged Work]`},
		{"no list sent", nil, `[\Seen \Flagged $Forwarded Work]`},
		{"nothing permanent", []imap.Flag{}, `[\Seen \Flagged]`},
	} {
		if got := fmtFlags(newFlagFilter(tc.permanent).keep(in)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func fmtFlags(flags []imap.Flag) string {
	s := make([]string, len(flags))
	for i, f := range flags {
		s[i] = string(f)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestFilterMessages(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 1, d, 23, 30, 0, 0, time.FixedZone("", -5*3600)) }
	opts := Options{MaxMessageBytes: 100, Since: time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)}
	msgs := []message{
		{UID: 1, Size: 100, Date: day(10)},                                // the since day itself counts
		{UID: 2, Size: 101, Date: day(11)},                                // too big
		{UID: 3, Size: 50, Date: day(9)},                                  // too old (23:30 -05:00 is still the 9th)
		{UID: 4, Size: 50, Date: day(12), Flags: []imap.Flag{`\DELETED`}}, // deleted
	}
	for _, msg := range msgs {
		if got, want := opts.wantsMessage(msg.Flags, msg.Size, msg.Date), msg.UID == 1; got != want {
			t.Errorf("message %d let through: %t, want %t", msg.UID, got, want)
		}
	}
	opts.CopyDeleted = true
	if m := msgs[3]; !opts.wantsMessage(m.Flags, m.Size, m.Date) {
		t.Error("CopyDeleted did not copy a \\Deleted message")
	}
}

// TestIdentityReadsPastAMalformedLine: a stray control character or a line
// without a colon must not hide the fields after it; two messages of one
// size that differ only in their Message-ID stay two.
func TestIdentityReadsPastAMalformedLine(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"Date: \x10\r\n", "no colon here\r\n", "X-Bin: a\x00b\r\n"} {
		a := identity([]byte(bad+"Message-ID: <a@x>\r\n"), 10)
		b := identity([]byte(bad+"Message-ID: <b@x>\r\n"), 10)
		if a != "id:<a@x>/10" || b != "id:<b@x>/10" {
			t.Errorf("after %q: identities %q and %q, want each its Message-ID", bad, a, b)
		}
	}
	if got := identity([]byte("Subject: x\r\n\r\nMessage-ID: <in the body>\r\n"), 1); strings.HasPrefix(got, "id:") {
		t.Errorf("a Message-ID after the header's end was used: %q", got)
	}
}
