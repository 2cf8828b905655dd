package transfer

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// TestSourceIsCountedBeforeTheCopy: the first progress a run reports
// already has the source's messages and bytes, and what the run copied,
// skipped and saw fail makes up that total, on the first run and on a
// re-run with nothing to copy. Dovecot counts with LIST-STATUS and SIZE
// (RFC 8438) in one command; a server with neither is counted with STATUS
// and a FETCH of the sizes.
func TestSourceIsCountedBeforeTheCopy(t *testing.T) {
	t.Parallel()
	t.Run("dovecot", func(t *testing.T) {
		t.Parallel()
		corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 3, Messages: 40, LargeMessages: 1, LargeSize: 300 << 10})
		var bytes int64
		for _, m := range corpus.Messages {
			bytes += int64(len(m.Body))
		}
		p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
		p.src.Load(t, "alice", corpus)
		wantCounted(t, p.job, len(corpus.Messages), bytes)
	})
	t.Run("without LIST-STATUS and STATUS=SIZE", func(t *testing.T) {
		t.Parallel()
		src := startFaultServer(t, faultOptions{Folders: listed("Projects", "Empty")})
		messages, bytes := 0, int64(0)
		for i, folder := range []string{"INBOX", "Projects"} {
			for n := range 5 + 10*i {
				m := srvMessage(fmt.Sprintf("%s-%d", folder, n), n)
				src.seed(t, folder, m)
				messages, bytes = messages+1, bytes+int64(len(m.Body))
			}
		}
		dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"a": "pw"}})
		wantCounted(t, srvJob(src.side(), dovecotSide(dst, "a", "pw"), Tuning{}), messages, bytes)
	})
}

// wantCounted runs job twice and fails t unless each run counted messages
// and bytes before its first progress report, and what it copied, skipped
// and saw fail makes up that count.
func wantCounted(t *testing.T, job Job, messages int, bytes int64) {
	t.Helper()
	for run := 1; run <= 2; run++ {
		var first *Progress
		job.OnProgress = func(p Progress) {
			if first == nil {
				first = &p
			}
		}
		p := srvRun(t, job, run).Progress
		if int(p.SourceMessages) != messages || p.SourceBytes != bytes {
			t.Errorf("run %d counted %d messages, %d bytes; the source has %d, %d", run, p.SourceMessages, p.SourceBytes, messages, bytes)
		}
		if first != nil && (first.SourceMessages != p.SourceMessages || first.SourceBytes != p.SourceBytes) {
			t.Errorf("run %d: the first progress had %d messages, %d bytes: the count came late", run, first.SourceMessages, first.SourceBytes)
		}
		if handled := p.MessagesCopied + p.MessagesSkipped + p.MessagesFailed; handled != p.SourceMessages {
			t.Errorf("run %d: %d copied + %d skipped + %d failed make %d, not the %d counted",
				run, p.MessagesCopied, p.MessagesSkipped, p.MessagesFailed, handled, p.SourceMessages)
		}
	}
}

// TestLoginTestCountsTheSource: the connection test's login on the source
// also counts the folders the options let through, so that a task's
// totals are known before its first run; a wrong password is the test's
// failure, as before.
func TestLoginTestCountsTheSource(t *testing.T) {
	t.Parallel()
	corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 5, Messages: 30})
	var all, inbox SourceCount
	for _, m := range corpus.Messages {
		all.Messages, all.Bytes = all.Messages+1, all.Bytes+int64(len(m.Body))
		if m.Folder == "INBOX" {
			inbox.Messages, inbox.Bytes = inbox.Messages+1, inbox.Bytes+int64(len(m.Body))
		}
	}
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.Load(t, "alice", corpus)
	for _, tc := range []struct {
		name string
		opts Options
		want SourceCount
	}{
		{"every folder", Options{}, all},
		{"without INBOX", Options{ExcludeFolders: []*regexp.Regexp{regexp.MustCompile(`^INBOX$`)}},
			SourceCount{all.Messages - inbox.Messages, all.Bytes - inbox.Bytes}},
	} {
		got, counted, err := CheckLoginAndCount(t.Context(), p.job.Source, Tuning{}, tc.opts)
		if err != nil || !counted || got != tc.want {
			t.Errorf("%s: %+v, %v, %v; want %+v", tc.name, got, counted, err, tc.want)
		}
	}
	wrong := p.job.Source
	wrong.Password = "wrong"
	if _, counted, err := CheckLoginAndCount(t.Context(), wrong, Tuning{}, Options{}); imapconn.KindOf(err) != imapconn.KindAuth || counted {
		t.Errorf("wrong password: %v, counted %v", err, counted)
	}
}
