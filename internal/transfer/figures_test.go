package transfer

import (
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/progress"
)

// An attempt broken off part-way and taken up again describes the whole
// pass: what the first attempt copied counts as copied, not as found
// again, and nothing planned is counted twice.
func TestFiguresDescribeTheWholePass(t *testing.T) {
	t.Parallel()
	var p Progress
	f := newFigures(&p)
	// First attempt: 5 messages were there before, 1 is left out by the
	// options, 10 are to copy; 4 are copied and 1 refused, then the
	// connection breaks.
	f.restart("INBOX")
	f.found("INBOX", 5)
	f.skip("INBOX", 1)
	f.plan("INBOX", 10)
	for range 4 {
		f.copied("INBOX", 100)
	}
	f.failed("INBOX")
	// Second attempt: the 4 copies are mapped now; the refused one is
	// tried again with the other 5, and refused again.
	f.restart("INBOX")
	f.found("INBOX", 5+4)
	f.skip("INBOX", 1)
	f.plan("INBOX", 6)
	for range 5 {
		f.copied("INBOX", 100)
	}
	f.failed("INBOX")
	want := Progress{Figures: progress.Figures{MessagesTotal: 10, MessagesCopied: 9, MessagesSkipped: 6, MessagesFailed: 1, BytesCopied: 900}}
	if p != want {
		t.Errorf("figures %+v, want %+v", p, want)
	}
}
