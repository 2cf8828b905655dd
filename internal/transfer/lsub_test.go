package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

func TestParseLSUB(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		response, folder string
		ok               bool
	}{
		{`LSUB () "/" "Projects/2024"`, "Projects/2024", true},
		{`LSUB (\HasNoChildren) "." INBOX.Sent`, "INBOX.Sent", true},
		{`LSUB () "/" "Entw&APw-rfe"`, "Entwürfe", true},
		{`LSUB () NIL "with \"quotes\" \\ and space"`, `with "quotes" \ and space`, true},
		{`LSUB () "/" inbox`, "INBOX", true},
		{`LSUB (\Noselect) "/" "Archive"`, "", false}, // listed for a subscribed child
		{`LIST () "/" "Projects"`, "", false},
		{`LSUB () "/" "unterminated`, "", false},
		{`LSUB`, "", false},
	} {
		folder, ok := parseLSUB(tc.response)
		if folder != tc.folder || ok != tc.ok {
			t.Errorf("parseLSUB(%q) = %q %v, want %q %v", tc.response, folder, ok, tc.folder, tc.ok)
		}
	}
}

func TestDecodeMailboxNameInvertsEncode(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"INBOX", "Entwürfe", "日本語/下書き", "a&b", "&", "Ünïcödé & more", "😀 emoji"} {
		if got := decodeMailboxName(encodeMailboxName(name)); got != name {
			t.Errorf("decode(encode(%q)) = %q", name, got)
		}
	}
	// Malformed runs stay as sent rather than vanish.
	for _, wire := range []string{"bad&", "bad&!!!-", "odd&AP-"} {
		if got := decodeMailboxName(wire); got != wire {
			t.Errorf("decode(%q) = %q, want it unchanged", wire, got)
		}
	}
}

// olderServerCapability is what a server without LIST-EXTENDED (RFC
// 5258), LIST-STATUS or SPECIAL-USE announces, e.g. an older Courier or
// Exchange.
const olderServerCapability = "IMAP4rev1 LITERAL+ SASL-IR ID ENABLE IDLE NAMESPACE UIDPLUS CHILDREN MULTIAPPEND UNSELECT"

// TestSubscriptionsOfASourceWithoutListExtended: a source that does not
// announce LIST-EXTENDED tells its subscriptions only through LSUB; the
// migration is exact all the same, subscriptions included.
func TestSubscriptionsOfASourceWithoutListExtended(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw"},
		Capability: olderServerCapability})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "pw"}})
	src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 3, Messages: 40}))
	sourceBefore, destinationBefore := src.Logins(t, "alice"), dst.Logins(t, "alice")
	if _, err := Migrate(context.Background(), Job{Source: dovecotSide(src, "alice", "pw"), Destination: dovecotSide(dst, "alice", "pw")}); err != nil {
		t.Fatal(err)
	}
	// LSUB goes on the source's one session, as MULTIAPPEND on the
	// destination's.
	if source, destination := src.Logins(t, "alice")-sourceBefore, dst.Logins(t, "alice")-destinationBefore; source != 1 || destination != 1 {
		t.Errorf("%d source and %d destination logins, want one each", source, destination)
	}
	if diff := imaptest.Diff(src.Read(t, "alice"), dst.Read(t, "alice")); len(diff) > 0 {
		t.Fatalf("destination differs:\n%s", strings.Join(diff, "\n"))
	}
}
