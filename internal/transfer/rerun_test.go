package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// The re-run tests prove "nothing lost, nothing twice" (docs/design.md#nothing-lost-nothing-twice) by the
// runs that used to break it, each between two real Dovecots; every one
// failed with the engine of a watermark and a count.

// numbered returns n INBOX messages; the ones at the indexes in twins
// are byte-identical to the first of them.
func numbered(n int, twins ...int) []imaptest.Message {
	msgs := make([]imaptest.Message, n)
	for i := range msgs {
		id := i
		if slices.Contains(twins, i) {
			id = twins[0]
		}
		msgs[i] = imaptest.Message{Folder: "INBOX", Date: time.Date(2024, 3, 1+id%28, 10, 0, 0, 0, time.UTC),
			Body: []byte(mail(fmt.Sprintf("m%d@example.com", id), fmt.Sprint("message ", id), 500+id))}
	}
	return msgs
}

// runTimes migrates n times, each run with the state of the last.
func (p *dovecotPair) runTimes(t *testing.T, n int) []Result {
	t.Helper()
	var results []Result
	for range n {
		res, err := Migrate(t.Context(), p.job)
		if err != nil {
			t.Fatalf("run %d: %v", len(results)+1, err)
		}
		results = append(results, res)
	}
	return results
}

func (p *dovecotPair) wantExact(t *testing.T) {
	t.Helper()
	wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))
}

// Case 2: a message identical to one copied before arrives on the source:
// it is a message of its own and is copied.
func TestIdenticalMessageArrivingBetweenRunsIsCopied(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(10)})
	p.runTimes(t, 1)
	p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(10)[3:4]})
	if res := p.runTimes(t, 1)[0]; res.MessagesCopied != 1 {
		t.Errorf("copied %d, want the newcomer", res.MessagesCopied)
	}
	p.wantExact(t)
}

// Case 3: a cancel between two identical messages, then re-runs, with the
// state kept and with the state lost.
func TestCancelBetweenIdenticalMessagesLosesNothing(t *testing.T) {
	t.Parallel()
	for _, lose := range []bool{false, true} {
		t.Run(fmt.Sprintf("state lost %t", lose), func(t *testing.T) {
			t.Parallel()
			p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
			p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(200, 5, 150)})
			ctx, cancel := context.WithCancel(t.Context())
			job := p.job
			job.Tuning.SingleAppend = true // a cancel between the twins, not in one batch with both
			job.OnProgress = func(pr Progress) {
				if pr.MessagesCopied >= 61 {
					cancel()
				}
			}
			res, err := Migrate(ctx, job)
			if err == nil || res.MessagesCopied >= 200 {
				t.Fatalf("the cancel came too late: copied %d, %v", res.MessagesCopied, err)
			}
			if lose {
				p.job.State = syncstate.NewMemoryState()
			}
			p.runTimes(t, 3)
			p.wantExact(t)
		})
	}
}

// Case 4: the user deletes the destination folder between runs: it is
// created and filled again.
func TestDeletedDestinationFolderIsRefilled(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	msgs := numbered(12)
	for i := range msgs[:7] {
		msgs[i].Folder = "Projects"
	}
	p.src.Load(t, "alice", imaptest.Corpus{Folders: []imaptest.Folder{{Name: "Projects"}}, Messages: msgs})
	p.runTimes(t, 1)
	c := p.dst.Login(t, "alice@new", "new-pw")
	if err := c.Delete("INBOX.Projects").Wait(); err != nil {
		t.Fatal(err)
	}
	res := p.runTimes(t, 3)
	if res[0].MessagesCopied != 7 || res[1].MessagesCopied != 0 || res[2].MessagesCopied != 0 {
		t.Errorf("runs after the delete copied %d, %d and %d, want 7, 0 and 0", res[0].MessagesCopied, res[1].MessagesCopied, res[2].MessagesCopied)
	}
	p.wantExact(t)
}

// Case 5: a message flagged \Deleted at the first run is left out; once
// undeleted, it is copied.
func TestUndeletedMessageIsCopied(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	msgs := numbered(8)
	msgs[2].Flags = []imap.Flag{imap.FlagDeleted}
	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs})
	if res := p.runTimes(t, 1)[0]; res.MessagesCopied != 7 {
		t.Fatalf("first run copied %d, want 7", res.MessagesCopied)
	}
	storeFlags(t, p.src.Login(t, "alice", "old-pw"), "INBOX", imap.StoreFlagsDel, imap.FlagDeleted)
	res := p.runTimes(t, 3)
	if res[0].MessagesCopied != 1 || res[1].MessagesCopied != 0 || res[2].MessagesCopied != 0 {
		t.Errorf("runs after the undelete copied %d, %d and %d, want 1, 0 and 0", res[0].MessagesCopied, res[1].MessagesCopied, res[2].MessagesCopied)
	}
	p.wantExact(t)
}

// Case 8: flags changed on the source after the first copy reach the
// destination: read, answered, unflagged, a keyword added.
func TestSourceFlagChangesReachTheDestination(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	msgs := numbered(20)
	for i := range msgs {
		if i%2 == 0 {
			msgs[i].Flags = []imap.Flag{imap.FlagFlagged}
		}
	}
	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs})
	p.runTimes(t, 1)
	c := p.src.Login(t, "alice", "old-pw")
	storeFlags(t, c, "INBOX", imap.StoreFlagsAdd, imap.FlagSeen, imap.FlagAnswered, "$Forwarded")
	storeFlags(t, c, "INBOX", imap.StoreFlagsDel, imap.FlagFlagged)
	for range 3 {
		if res := p.runTimes(t, 1)[0]; res.MessagesCopied != 0 {
			t.Errorf("a flag change copied %d messages", res.MessagesCopied)
		}
		p.wantExact(t)
	}
}

// storeFlags changes the flags of every message of folder.
func storeFlags(t *testing.T, c *imapclient.Client, folder string, op imap.StoreFlagsOp, flags ...imap.Flag) {
	t.Helper()
	if _, err := c.Select(folder, nil).Wait(); err != nil {
		t.Fatal(err)
	}
	var all imap.SeqSet
	all.AddRange(1, 0)
	if err := c.Store(all, &imap.StoreFlags{Op: op, Silent: true, Flags: flags}, nil).Close(); err != nil {
		t.Fatal(err)
	}
}

// writeEmptyMessage drops an empty message into login's INBOX on d, as a
// delivery agent would: Dovecot saves no empty message by APPEND, so the
// destination refuses its copy.
func writeEmptyMessage(t *testing.T, d *imaptest.Dovecot, login string) {
	t.Helper()
	path := filepath.Join(d.Dir, "home", login, "Maildir", "cur", "1700000000.M1P1.test,S=0:2,S")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Case 7: the destination holds more messages than the source, but lacks
// one: the folder is not verified.
func TestVerificationFindsAMissingMessageBesideExtraOnes(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.dst.Load(t, "alice@new", imaptest.Corpus{Messages: numbered(30)[20:]})
	p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(5)})
	writeEmptyMessage(t, p.src, "alice")
	res, err := Migrate(t.Context(), p.job)
	if err != nil {
		t.Fatal(err)
	}
	inbox := folderResult(t, res, "INBOX")
	if inbox.Verified() || inbox.Missing() != 1 || inbox.SourceMessages != 6 {
		t.Errorf("INBOX %+v: want 6 covered, 1 missing, not verified", inbox)
	}
}

// Cases 11 and 12: source and destination connections reset every few
// hundred kilobytes, with identical pairs in the folder: every message
// arrives exactly once.
func TestResetConnectionsLoseAndDuplicateNothing(t *testing.T) {
	t.Parallel()
	for _, side := range []string{"source", "destination"} {
		t.Run(side, func(t *testing.T) {
			t.Parallel()
			p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
			p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(400, 10, 210, 390)})
			target, port := p.src, &p.job.Source.Port
			if side == "destination" {
				target, port = p.dst, &p.job.Destination.Port
			}
			proxy := startCuttingProxy(t, net.JoinHostPort(target.Host, strconv.Itoa(target.Port)), 60_000, 6)
			proxy.downstream.Store(side == "source")
			*port = proxy.port()
			p.job.Tuning = Tuning{Backoff: 10 * time.Millisecond, Tries: 10}
			p.runTimes(t, 4)
			if proxy.conns.Load() < 5 {
				t.Fatalf("the proxy saw %d connections: the faults were not injected", proxy.conns.Load())
			}
			p.wantExact(t)
		})
	}
}

func folderResult(t testing.TB, res Result, source string) FolderResult {
	t.Helper()
	for _, f := range res.Folders {
		if f.Source == source {
			return f
		}
	}
	t.Fatalf("no result for folder %s in %+v", source, res.Folders)
	return FolderResult{}
}

// Case 10: a destination with a size limit refuses one message with
// NO [LIMIT]: that message is recorded, the others are copied, the
// account does not loop through its retries, and the figures add up.
// With and without LITERAL+ and MULTIAPPEND: a server without LITERAL+
// refuses before it asks for the message.
func TestOversizeMessageIsRefusedAlone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, capability string }{
		{"dovecot", ""},
		{"no LITERAL+ nor MULTIAPPEND", "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE SORT THREAD=REFERENCES UIDPLUS NAMESPACE SPECIAL-USE"},
		{"no UIDPLUS", "IMAP4rev1 LITERAL+ MULTIAPPEND NAMESPACE SPECIAL-USE LIST-EXTENDED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "old-pw"}})
			dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice@new": "new-pw"},
				MaxMailSize: 1 << 20, Capability: tc.capability})
			msgs := numbered(30)
			big := msgs[12]
			big.Body = bigMessage(2 << 20)
			src.Load(t, "alice", imaptest.Corpus{Messages: append(msgs, big)})
			p := &dovecotPair{src: src, dst: dst, job: Job{Source: dovecotSide(src, "alice", "old-pw"),
				Destination: dovecotSide(dst, "alice@new", "new-pw"), State: syncstate.NewMemoryState(), Tuning: Tuning{Backoff: 10 * time.Millisecond}}}
			for run := range 3 {
				res := p.runTimes(t, 1)[0]
				inbox := folderResult(t, res, "INBOX")
				if len(inbox.Failures) != 1 || inbox.Missing() != 1 || res.MessagesFailed != 1 {
					t.Fatalf("run %d: INBOX %+v, failed %d: want the big message refused alone", run+1, inbox, res.MessagesFailed)
				}
				if want := map[int]int{0: 30}[run]; int(res.MessagesCopied) != want || int(res.MessagesTotal) != want+1 {
					t.Errorf("run %d: copied %d of %d, want %d of %d", run+1, res.MessagesCopied, res.MessagesTotal, want, want+1)
				}
			}
			if got := len(dst.Read(t, "alice@new").Messages); got != 30 {
				t.Errorf("destination holds %d messages, want the 30 good ones once", got)
			}
		})
	}
}

// With MirrorDeletions, messages expunged from the source after their copy
// are expunged from the destination; a message the engine did not copy
// is never touched, even one the user flagged \Deleted there. Without it,
// the copies stay.
func TestMirrorDeletionsTouchesOnlyOwnCopies(t *testing.T) {
	t.Parallel()
	for _, mirror := range []bool{false, true} {
		t.Run(fmt.Sprintf("mirror %t", mirror), func(t *testing.T) {
			t.Parallel()
			p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
			p.job.Options.MirrorDeletions = mirror
			p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(10)})
			p.runTimes(t, 1)
			theirs := numbered(40)[30]
			theirs.Flags = []imap.Flag{imap.FlagDeleted}
			p.dst.Load(t, "alice@new", imaptest.Corpus{Messages: []imaptest.Message{theirs}})

			c := p.src.Login(t, "alice", "old-pw")
			if _, err := c.Select("INBOX", nil).Wait(); err != nil {
				t.Fatal(err)
			}
			var three imap.SeqSet
			three.AddRange(4, 6)
			if err := c.Store(three, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Expunge().Close(); err != nil {
				t.Fatal(err)
			}
			p.runTimes(t, 2)
			got := p.dst.Read(t, "alice@new").Messages
			want := 11
			if mirror {
				want = 8
			}
			if len(got) != want {
				t.Errorf("destination holds %d messages, want %d", len(got), want)
			}
			if !slices.ContainsFunc(got, func(m imaptest.Message) bool { return string(m.Body) == string(theirs.Body) }) {
				t.Error("the user's own message on the destination was expunged")
			}
		})
	}
}

// Case 12, deterministically: an APPEND went unanswered, was copied again,
// and the server saved the first one after all (a late commit). The next
// run expunges that second copy, and only it: a copy of the same message
// that was on the destination before the run is the user's, and stays.
func TestLateCopyOfAnUnansweredAppendIsExpunged(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	msgs := numbered(10)
	p.dst.Load(t, "alice@new", imaptest.Corpus{Messages: msgs[3:4]}) // the user's own copy
	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs})
	p.runTimes(t, 1)
	state := p.job.State.(*syncstate.MemoryState)
	states, _ := state.FolderStates(t.Context())
	inbox := states["INBOX"]
	inbox.InDoubt, inbox.InDoubtFrom, inbox.InDoubtSince = []uint32{4, 6}, inbox.DestUIDNext, time.Now()
	inbox.Complete = false
	if err := state.SetFolderState(t.Context(), "INBOX", inbox); err != nil {
		t.Fatal(err)
	}
	p.dst.Load(t, "alice@new", imaptest.Corpus{Messages: msgs[3:4]}) // the late copy of source UID 4
	res := p.runTimes(t, 2)
	if res[0].MessagesCopied != 0 {
		t.Errorf("copied %d", res[0].MessagesCopied)
	}
	p.wantExact(t)
	// The user's copy, found by the first run (UID 1), is the one kept.
	if got := p.dst.Read(t, "alice@new").Messages; string(got[0].Body) != string(msgs[3].Body) {
		t.Error("the user's own copy was expunged instead of the late one")
	}
	states, _ = state.FolderStates(t.Context())
	if st := states["INBOX"]; !slices.Equal(st.InDoubt, []uint32{6}) {
		t.Errorf("in doubt after the runs: %v, want [6] (not seen yet, within the grace)", st.InDoubt)
	}
}

// Messages expunged from the source while a folder is listed window by
// window (by sequence number) shift the numbers of the messages after
// them: the windows follow the server's EXPUNGE responses (RFC 9051
// §7.5.1), so that no message is passed over by the run.
func TestExpungeDuringTheListingSkipsNothing(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(20)})
	other := p.src.Login(t, "alice", "old-pw")
	if _, err := other.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	p.job.Tuning.Window = 4
	p.job.Tuning.SingleAppend = true
	var expunged bool
	p.job.OnProgress = func(pr Progress) {
		if pr.MessagesCopied == 1 && !expunged { // in the first window
			expunged = true
			var two imap.SeqSet
			two.AddRange(2, 3)
			if err := other.Store(two, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
				t.Error(err)
			}
			if err := other.Expunge().Close(); err != nil {
				t.Error(err)
			}
		}
	}
	res := p.runTimes(t, 1)[0]
	if !expunged {
		t.Fatal("the expunge was not made")
	}
	got := len(p.dst.Read(t, "alice@new").Messages)
	// 18 are left on the source; the two expunged may have been copied
	// before they went.
	if got < 18 || !folderResult(t, res, "INBOX").Verified() {
		t.Errorf("one run copied %d messages (%d on the destination); want every one of the 18 left", res.MessagesCopied, got)
	}
}

// A re-run of a folder whose flags were all carried reads the UIDs of its
// messages and the flags of only those changed since (RFC 7162,
// CHANGEDSINCE): measured as the bytes the source sends, against a re-run
// that must read every message's flags.
func TestRerunReadsOnlyChangedFlags(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.WriteInbox(t, "alice", 3000, func(i int) []byte {
		return []byte(fmt.Sprintf("From: a@example.com\r\nSubject: %d\r\nMessage-ID: <%d@changed>\r\n\r\nmessage %d\r\n", i, i, i))
	})
	proxy := startCuttingProxy(t, p.src.Addr(), 0, 0)
	p.job.Source.Port = proxy.port()
	p.runTimes(t, 1)
	flagOne := func(seq uint32, flag imap.Flag) {
		c := p.src.Login(t, "alice", "old-pw")
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		var one imap.SeqSet
		one.AddNum(seq)
		if err := c.Store(one, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{flag}}, nil).Close(); err != nil {
			t.Fatal(err)
		}
		c.Logout().Wait()
	}
	rerun := func() int64 {
		proxy.received.Store(0)
		if res := p.runTimes(t, 1)[0]; res.MessagesCopied != 0 {
			t.Errorf("a flag change copied %d messages", res.MessagesCopied)
		}
		p.wantExact(t)
		return proxy.received.Load()
	}
	flagOne(1500, imap.FlagFlagged)
	changedOnly := rerun()
	// The same change again, with a state that knows no modseq.
	state := p.job.State.(*syncstate.MemoryState)
	states, _ := state.FolderStates(t.Context())
	inbox := states["INBOX"]
	inbox.SourceHighestModSeq = 0
	state.SetFolderState(t.Context(), "INBOX", inbox)
	flagOne(1501, imap.FlagFlagged)
	everything := rerun()
	t.Logf("re-run after one flag change: %d bytes from the source; reading every message's flags: %d", changedOnly, everything)
	if changedOnly == 0 || changedOnly*3 > everything {
		t.Errorf("the re-run read %d bytes, not much less than the %d of a full listing", changedOnly, everything)
	}
}

type countingWriter struct {
	io.Writer
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	w.n.Add(int64(len(b)))
	return w.Writer.Write(b)
}

// stateWritesRefused is a sync state whose folder states cannot be
// written (the database went away at that moment), while its maps can.
type stateWritesRefused struct{ syncstate.StateStore }

var errStateWrite = fmt.Errorf("the database is unreachable")

func (stateWritesRefused) SetFolderState(context.Context, string, syncstate.FolderState) error {
	return errStateWrite
}

func (stateWritesRefused) ResetFolders(context.Context, map[string]syncstate.FolderState) error {
	return errStateWrite
}

// ReplaceFolder writes a state with the map: refused as a whole.
func (stateWritesRefused) ReplaceFolder(context.Context, string, []syncstate.Mapping, syncstate.FolderState) error {
	return errStateWrite
}

// A run that moves a folder's copy elsewhere (a changed folder map) drops
// the folder's UID map. Should it stop right there, no state may be left
// that trusts a map that is gone: when the folder map is put back and a
// message arrives, only that message is copied, not the folder again.
func TestStoppedFolderMoveCopiesNothingTwice(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	msgs := numbered(8)
	for i := range msgs {
		msgs[i].Folder = "Projects"
	}
	p.src.Load(t, "alice", imaptest.Corpus{Folders: []imaptest.Folder{{Name: "Projects"}}, Messages: msgs[:6]})
	p.runTimes(t, 1)

	state := p.job.State
	moved := p.job
	moved.State = stateWritesRefused{state}
	moved.Options.FolderMap = map[string]string{"Projects": "INBOX.Elsewhere"}
	moved.Tuning.Tries = 1
	if _, err := Migrate(t.Context(), moved); !errors.Is(err, errStateWrite) {
		t.Fatalf("the run that could not store its state: %v", err)
	}
	// It got as far as creating the new folder.
	if err := p.dst.Login(t, "alice@new", "new-pw").Delete("INBOX.Elsewhere").Wait(); err != nil {
		t.Fatal(err)
	}

	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs[6:7]})
	if res := p.runTimes(t, 1); res[0].MessagesCopied != 1 {
		t.Errorf("the run after the stopped move copied %d messages, want the new one", res[0].MessagesCopied)
	}
	p.wantExact(t)
}

// A re-run keeps the folder's stored state until the folder is done: when
// it cannot store the new one at the end, the next run still finds the
// folder changed (its counts moved on), and copies nothing twice.
func TestRerunThatCannotStoreItsStateCopiesNothingTwice(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	msgs := numbered(9)
	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs[:5]})
	p.runTimes(t, 1)

	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs[5:8]})
	stopped := p.job
	stopped.State = stateWritesRefused{p.job.State}
	stopped.Tuning.Tries = 1
	if _, err := Migrate(t.Context(), stopped); !errors.Is(err, errStateWrite) {
		t.Fatalf("the run that could not store its state: %v", err)
	}
	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs[8:]})
	if res := p.runTimes(t, 1); res[0].MessagesCopied != 1 {
		t.Errorf("the next run copied %d messages, want the one that arrived since", res[0].MessagesCopied)
	}
	p.wantExact(t)
}
