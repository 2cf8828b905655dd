package transfer

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// commandLog records the command lines that clients send a server
// through its proxy (imaptest.LineProxy).
type commandLog struct {
	mu    sync.Mutex
	lines []string
}

// proxy returns the host and port that reach the server at addr through
// the log.
func (l *commandLog) proxy(t *testing.T, addr string) (string, int) {
	return imaptest.LineProxy(t, addr, func(line string) {
		l.mu.Lock()
		l.lines = append(l.lines, line)
		l.mu.Unlock()
	})
}

// take returns the commands named verb (SELECT, EXAMINE…) sent since the
// last take, and forgets every line.
func (l *commandLog) take(verb string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []string
	for _, line := range l.lines {
		if fields := strings.Fields(line); len(fields) > 2 && strings.EqualFold(fields[1], verb) {
			found = append(found, strings.Join(fields[2:], " "))
		}
	}
	l.lines = nil
	return found
}

// counts returns how many commands of each verb (UID for UID FETCH…)
// were sent since the last take or count, and forgets every line.
func (l *commandLog) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]int{}
	for _, line := range l.lines {
		if fields := strings.Fields(line); len(fields) > 1 {
			n[strings.ToUpper(fields[1])]++
		}
	}
	l.lines = nil
	return n
}

// Folders that the listings show empty on both sides are not opened: a
// first copy of an account whose mail is all in INBOX selects INBOX alone
// on each server, beside its empty Drafts, Sent, Trash… Their state is
// kept all the same: a message that later arrives in one of them is
// copied by the next pass, which opens that folder only.
func TestEmptyFoldersAreNotOpened(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.WriteInbox(t, "alice", 3, func(i int) []byte {
		return fmt.Appendf(nil, "From: <a@example.com>\r\nSubject: %d\r\nMessage-ID: <%d@example.com>\r\n\r\nHello.\r\n", i, i)
	})
	var source, destination commandLog
	job := p.job
	job.Source.Host, job.Source.Port = source.proxy(t, p.src.Addr())
	job.Destination.Host, job.Destination.Port = destination.proxy(t, p.dst.Addr())
	writes := &writesLog{StateStore: job.State}
	job.State = writes
	res := migrateVerified(t, job)
	if len(res.Folders) < 3 {
		t.Fatalf("%d folders: the source should have empty ones beside INBOX", len(res.Folders))
	}
	if examined, selected := source.take("EXAMINE"), destination.take("SELECT"); len(examined) != 1 || len(selected) != 1 {
		t.Errorf("the source's folders opened: %q; the destination's: %q; want INBOX alone on each", examined, selected)
	}
	// The empty folders' states are stored together, in one write. INBOX,
	// without a state on a first copy, has no reset of its own: it goes
	// with the folder's one write at its end.
	if want := []string{"reset " + strings.Join(emptyFolders(res), ", ")}; !slices.Equal(writes.resets(), want) {
		t.Errorf("folder states reset %q, want %q", writes.resets(), want)
	}
	states, err := job.State.FolderStates(t.Context())
	if err != nil || len(states) != len(res.Folders) {
		t.Errorf("%d folder states stored (%v), want one for each of the %d folders", len(states), err, len(res.Folders))
	}
	wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))

	c := p.src.Login(t, "alice", "old-pw")
	body := "From: <a@example.com>\r\nSubject: a draft\r\nMessage-ID: <draft@example.com>\r\n\r\nLater.\r\n"
	appendCmd := c.Append("Drafts", int64(len(body)), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagDraft}})
	if _, err := io.WriteString(appendCmd, body); err != nil {
		t.Fatal(err)
	}
	if err := appendCmd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := appendCmd.Wait(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	source.take("")
	res = migrateVerified(t, job)
	if res.MessagesCopied != 1 {
		t.Errorf("the second pass copied %d messages, want the draft", res.MessagesCopied)
	}
	if examined := source.take("EXAMINE"); len(examined) != 1 || !strings.Contains(examined[0], "Drafts") {
		t.Errorf("the second pass opened %q on the source, want Drafts alone", examined)
	}
	wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))
}

// emptyFolders are the source folders of res other than INBOX, sorted.
func emptyFolders(res Result) []string {
	var names []string
	for _, f := range res.Folders {
		if f.Source != "INBOX" {
			names = append(names, f.Source)
		}
	}
	slices.Sort(names)
	return names
}

// A folder's copy asks the destination nothing it does not need: the
// read-back's FETCH, answered after the APPENDs, tells the client all the
// folder holds, so no NOOP follows the copies of a folder read back (one
// each before the read-back and at the folder's end cost a hosted
// account of 15 folders 30 round trips, and the server 30 syncs of its
// index). A folder with nothing to copy still asks, once. And a folder
// copied in one window stores its map with its state, in one write.
func TestFoldersReadBackNeedNoNoop(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 2001, Messages: 40}))
	var destination commandLog
	job := p.job
	job.Destination.Host, job.Destination.Port = destination.proxy(t, p.dst.Addr())
	writes := &writesLog{StateStore: job.State}
	job.State = writes
	res := migrateVerified(t, job)
	withCopies := 0
	for _, f := range res.Folders {
		if f.SourceMessages > 0 {
			withCopies++
			// Its one window's map goes with its state, in one write.
			if n := slices.Index(writes.writes, "map and state "+f.Source); n < 0 || slices.Contains(writes.writes, "map "+f.Source) {
				t.Errorf("folder %s: writes %q, want its map and state in one", f.Source, writes.writes)
			}
		}
	}
	sent := destination.counts()
	fetched, noops := sent["UID"], sent["NOOP"]
	if withCopies < 5 || fetched < withCopies {
		t.Fatalf("%d folders with messages, %d UID commands: the corpus should need a read-back in several folders", withCopies, fetched)
	}
	if want := len(res.Folders) - withCopies; noops != want {
		t.Errorf("%d NOOPs for %d folders, %d of them with copies read back; want one for each folder without copies (%d)",
			noops, len(res.Folders), withCopies, want)
	}
	wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))
}
