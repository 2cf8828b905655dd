package transfer

import (
	"log/slog"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// The migration tests run between two real Dovecots of different layouts:
// "/" without prefix (Outlook-style special folders) and "." with the
// INBOX. prefix.

func dovecotSide(d *imaptest.Dovecot, login, password string) imapconn.Side {
	return imapconn.Side{Server: imapconn.Server{Host: d.Host, Port: d.Port, Security: imapconn.SecurityPlain}, Login: login, Password: password}
}

type dovecotPair struct {
	src, dst *imaptest.Dovecot
	job      Job
}

func newDovecotPair(t testing.TB, srcLayout, dstLayout imaptest.Layout) *dovecotPair {
	t.Helper()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: srcLayout, Users: map[string]string{"alice": "old-pw"}})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: dstLayout, Users: map[string]string{"alice@new": "new-pw"}})
	return &dovecotPair{src: src, dst: dst, job: Job{
		Source:      dovecotSide(src, "alice", "old-pw"),
		Destination: dovecotSide(dst, "alice@new", "new-pw"),
		State:       syncstate.NewMemoryState(),
		Logger:      debugLogger(),
	}}
}

// debugLogger writes the engine's log to stderr when
// MAILMIGRATE_TEST_DEBUG is set, to follow a failing run's reconnects.
func debugLogger() *slog.Logger {
	if os.Getenv("MAILMIGRATE_TEST_DEBUG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (p *dovecotPair) migrate(t *testing.T) Result {
	t.Helper()
	return migrateVerified(t, p.job)
}

// migrateVerified migrates once and fails t unless every folder is
// verified.
func migrateVerified(t *testing.T, job Job) Result {
	t.Helper()
	res, err := Migrate(t.Context(), job)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	for _, f := range res.Folders {
		if !f.Verified() {
			t.Errorf("folder %s → %s not verified: %+v", f.Source, f.Destination, f)
		}
	}
	return res
}

func wantSameMail(t *testing.T, want, got imaptest.Corpus) {
	t.Helper()
	if diff := imaptest.Diff(want, got); len(diff) > 0 {
		t.Fatalf("destination differs from source:\n%s", strings.Join(diff, "\n"))
	}
}

func TestMigrationBetweenDovecotsIsExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		src, dst imaptest.Layout
	}{
		{"slash to dot-INBOX", imaptest.LayoutSlash, imaptest.LayoutDotInbox},
		{"dot-INBOX to slash", imaptest.LayoutDotInbox, imaptest.LayoutSlash},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newDovecotPair(t, tc.src, tc.dst)
			corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 7, Messages: 300, LargeMessages: 2, LargeSize: 2 << 20})
			p.src.Load(t, "alice", corpus)
			before := p.src.Snapshot(t, "alice")
			sourceMail := p.src.Read(t, "alice")

			first := p.migrate(t)
			wantSameMail(t, sourceMail, p.dst.Read(t, "alice@new"))
			if int(first.MessagesCopied) != len(corpus.Messages) {
				t.Errorf("copied %d messages, the corpus has %d", first.MessagesCopied, len(corpus.Messages))
			}
			if after := p.src.Snapshot(t, "alice"); !maps.Equal(before, after) {
				t.Fatal("the migration changed the source mailbox (files, flags or \\Seen)")
			}

			// Nothing new: the second run copies and compares nothing.
			start := time.Now()
			second := p.migrate(t)
			if second.MessagesCopied != 0 || second.MessagesTotal != 0 {
				t.Errorf("second run: %+v", second.Progress)
			}
			// Unchanged on both sides (LIST-STATUS with HIGHESTMODSEQ):
			// no folder is even opened.
			for _, f := range second.Folders {
				if !f.Unchanged {
					t.Errorf("second run opened the unchanged folder %s", f.Source)
				}
			}
			t.Logf("first run %d messages; second run %s", first.MessagesCopied, time.Since(start))

			// New mail on the source: only that is copied.
			extra := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 99, Messages: 20})
			var added imaptest.Corpus
			for _, m := range extra.Messages {
				if m.Folder == "INBOX" || m.Folder == "\\Sent" {
					added.Messages = append(added.Messages, m)
				}
			}
			p.src.Load(t, "alice", added)
			third := p.migrate(t)
			if int(third.MessagesCopied) != len(added.Messages) {
				t.Errorf("third run copied %d, want the %d new ones", third.MessagesCopied, len(added.Messages))
			}
			wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))

			// A lost state falls back to identities: nothing is copied twice.
			p.job.State = syncstate.NewMemoryState()
			if again := p.migrate(t); again.MessagesCopied != 0 {
				t.Errorf("run without state copied %d", again.MessagesCopied)
			}
		})
	}
}
