package transfer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
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
	writeEmptyMessage(t, p.src, "alice")

	// Case 1 of the re-run cases: an operator's answer to "completed with
	// errors" is to run again, and again.
	for run := 1; run <= 4; run++ {
		res, err := Migrate(t.Context(), p.job)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
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
		want := map[int]int{1: 30}[run]
		if int(res.MessagesCopied) != want {
			t.Errorf("run %d copied %d, want %d", run, res.MessagesCopied, want)
		}
	}
	got := p.dst.Read(t, "alice@new")
	if n := len(got.Messages); n != 30 {
		t.Errorf("destination has %d messages, want the 30 good ones once", n)
	}
}

// TestFullDestinationFailsTheAccountClearly fills the destination's quota
// mid-way: the account fails at once (no retry storm) with the server's
// words, and what was copied stays.
func TestFullDestinationFailsTheAccountClearly(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw"}})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "pw"}, QuotaBytes: 300 << 10})
	src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 4, Messages: 120}))
	start := time.Now()
	res, err := Migrate(t.Context(), Job{Source: dovecotSide(src, "alice", "pw"), Destination: dovecotSide(dst, "alice", "pw")})
	if imapconn.KindOf(err) != imapconn.KindQuota {
		t.Fatalf("error %v, want an over-quota failure", err)
	}
	if !strings.Contains(err.Error(), "destination alice at 127.0.0.1:") || !strings.Contains(strings.ToLower(err.Error()), "quota") {
		t.Errorf("error text %q should name the destination and the quota", err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("took %s: a full mailbox must not be retried", elapsed)
	}
	if int(res.MessagesCopied) == 0 || len(dst.Read(t, "alice").Messages) != int(res.MessagesCopied) {
		t.Errorf("copied %d before the quota; the destination holds %d", res.MessagesCopied, len(dst.Read(t, "alice").Messages))
	}
}

// TestAppendLimitIsHeeded: a destination that announces APPENDLIMIT=N
// (RFC 7889) gets no message larger than N; each such message fails with
// words saying why and stays on the source, and the others are copied.
// (The server would refuse it with its own words: those would show.)
func TestAppendLimitIsHeeded(t *testing.T) {
	t.Parallel()
	const limit = 2000
	src := startFaultServer(t, faultOptions{})
	small, large := srvMessage("small", 1), srvMessage("large", 2)
	large.Body += strings.Repeat("x", limit)
	src.seed(t, "INBOX", small, large, srvMessage("small-2", 3))
	dst := startFaultServer(t, faultOptions{Caps: faultCaps(imap.CapAppendLimit), AppendLimit: limit})
	res := srvRun(t, srvJob(src.side(), dst.side(), Tuning{}), 1)
	if got := len(dst.read(t, "INBOX")); got != 2 {
		t.Errorf("the destination holds %d messages, want the 2 small ones", got)
	}
	var failures []syncstate.MessageFailure
	for _, folder := range res.Folders {
		failures = append(failures, folder.Failures...)
	}
	want := fmt.Sprintf("the message of %d bytes is larger than the destination takes (APPENDLIMIT=%d); it stays on the source", len(large.Body), limit)
	if len(failures) != 1 || failures[0].Side != "destination" || failures[0].Reason != want || res.Progress.MessagesFailed != 1 {
		t.Errorf("failures %+v (%d failed), want one: %q", failures, res.Progress.MessagesFailed, want)
	}
}
