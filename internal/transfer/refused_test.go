package transfer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// TestRefusedMessageIsRecordedAndSkipped puts a message the destination
// refuses (Dovecot saves no empty message) among good ones: the
// MULTIAPPEND batch holding it is refused whole, is sent again one by one,
// and only the empty message is left out, recorded, and tried again by
// the next run, which copies nothing twice.
func TestRefusedMessageIsRecordedAndSkipped(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	var inbox imaptest.Corpus
	for _, m := range imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 8, Messages: 200}).Messages {
		if m.Folder == "INBOX" && len(inbox.Messages) < 30 {
			inbox.Messages = append(inbox.Messages, m)
		}
	}
	p.src.Load(t, "alice", inbox)
	// An empty message, dropped into the source's maildir as a delivery
	// agent would.
	empty := filepath.Join(p.src.Dir, "home", "alice", "Maildir", "cur", "1700000000.M1P1.test,S=0:2,S")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	for run := 1; run <= 2; run++ {
		res, err := Migrate(t.Context(), p.job)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		p.job.State = res.State
		if res.MessagesFailed != 1 {
			t.Errorf("run %d: %d messages failed, want the empty one", run, res.MessagesFailed)
		}
		var inboxResult *FolderResult
		for i := range res.Folders {
			if res.Folders[i].Source == "INBOX" {
				inboxResult = &res.Folders[i]
			}
		}
		if inboxResult == nil || len(inboxResult.Failures) != 1 || !strings.Contains(inboxResult.Failures[0].Reason, "zero byte") {
			t.Fatalf("run %d: INBOX result %+v, want one failure with the server's reason", run, inboxResult)
		}
		if inboxResult.Verified() {
			t.Errorf("run %d: INBOX verified although the destination lacks a message", run)
		}
		want := map[int]int{1: 30, 2: 0}[run]
		if res.MessagesCopied != want {
			t.Errorf("run %d copied %d, want %d", run, res.MessagesCopied, want)
		}
	}
	got := p.dst.Read(t, "alice@new")
	if n := len(got.Messages); n != 30 {
		t.Errorf("destination has %d messages, want the 30 good ones once", n)
	}
}
