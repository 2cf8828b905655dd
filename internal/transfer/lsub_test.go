package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

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
