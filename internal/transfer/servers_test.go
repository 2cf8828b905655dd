package transfer

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// The server tests run the engine against faultServer, go-imap's in-memory
// server made to behave unlike Dovecot (no SPECIAL-USE, no LITERAL+, no
// UIDPLUS, refusals and silences), and prove the engine's guarantee there:
// each source message exactly once on the destination, with the source's
// flags, over several runs, with every run's state in a MemoryState.

// srvMessage is message n of a test: its own Message-ID (none when tag is
// empty, so that its identity is a hash of its header), subject, size
// and INTERNALDATE, with flags.
func srvMessage(tag string, n int, flags ...imap.Flag) faultMessage {
	id := ""
	if tag != "" {
		id = tag + "@servers.test"
	}
	return faultMessage{Flags: flags, Date: time.Date(2023, time.Month(1+n%12), 1+n%28, 9, n%60, 0, 0, time.UTC),
		Body: mail(id, "message "+tag+" "+fmt.Sprint(n), 300+7*n)}
}

// srvSeed stores msgs in folder of fs and returns them as the corpus
// messages the destination must hold in destFolder, and their source UIDs.
func srvSeed(t *testing.T, fs *faultServer, folder, destFolder string, msgs ...faultMessage) ([]imaptest.Message, []imap.UID) {
	t.Helper()
	uids := fs.seed(t, folder, msgs...)
	return corpusMessages(destFolder, msgs), uids
}

// corpusMessages turns faultMessages into corpus messages of folder, for
// imaptest.Diff: a multiset of (folder, body, INTERNALDATE, flags).
func corpusMessages(folder string, msgs []faultMessage) []imaptest.Message {
	out := make([]imaptest.Message, len(msgs))
	for i, m := range msgs {
		out[i] = imaptest.Message{Folder: folder, Flags: m.Flags, Date: m.Date, Body: []byte(m.Body)}
	}
	return out
}

// allMail reads every folder of fs on its clean port as corpus messages
// named by their folder, and the folders' names.
func (fs *faultServer) allMail(t *testing.T) ([]imaptest.Message, []string) {
	t.Helper()
	listed, err := fs.dialClean(t).List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var msgs []imaptest.Message
	var names []string
	for _, l := range listed {
		names = append(names, l.Mailbox)
		msgs = append(msgs, corpusMessages(l.Mailbox, fs.read(t, l.Mailbox))...)
	}
	slices.Sort(names)
	return msgs, names
}

// wantMail fails t unless got holds exactly the messages of want, each as
// many times, in the same folders, with the same flags and INTERNALDATE.
func wantMail(t *testing.T, what string, want, got []imaptest.Message) {
	t.Helper()
	if diff := imaptest.Diff(imaptest.Corpus{Messages: want}, imaptest.Corpus{Messages: got}); len(diff) > 0 {
		t.Fatalf("%s:\n%s", what, strings.Join(diff, "\n"))
	}
}

// without returns msgs without those at the indexes skip.
func without(msgs []imaptest.Message, skip ...int) []imaptest.Message {
	var out []imaptest.Message
	for i, m := range msgs {
		if !slices.Contains(skip, i) {
			out = append(out, m)
		}
	}
	return out
}

// listed is folders as faultOptions.Folders, without attributes.
func listed(names ...string) []imap.ListData {
	out := make([]imap.ListData, len(names))
	for i, name := range names {
		out[i] = imap.ListData{Mailbox: name}
	}
	return out
}

// srvJob is a job between two sides with a fresh MemoryState.
func srvJob(src, dst imapconn.Side, tuning Tuning) Job {
	return Job{Source: src, Destination: dst, State: syncstate.NewMemoryState(), Logger: debugLogger(), Tuning: tuning}
}

// srvRun migrates once and fails t on an error.
func srvRun(t *testing.T, job Job, run int) Result {
	t.Helper()
	res, err := Migrate(t.Context(), job)
	if err != nil {
		t.Fatalf("run %d: %v", run, err)
	}
	return res
}

// wantVerified fails t unless every folder of res is verified.
func wantVerified(t *testing.T, res Result, run int) {
	t.Helper()
	for _, f := range res.Folders {
		if !f.Verified() {
			t.Errorf("run %d: folder %s → %s not verified: %+v", run, f.Source, f.Destination, f)
		}
	}
}

// wantFailures fails t unless f's failures are exactly the source UIDs
// uids, on side, each with a reason holding the server's words.
func wantFailures(t *testing.T, run int, f FolderResult, side string, uids []imap.UID, words []string) {
	t.Helper()
	if len(f.Failures) != len(uids) {
		t.Fatalf("run %d: folder %s failures %+v, want UIDs %v on the %s", run, f.Source, f.Failures, uids, side)
	}
	failures := slices.Clone(f.Failures)
	slices.SortFunc(failures, func(a, b syncstate.MessageFailure) int { return int(a.UID) - int(b.UID) })
	for i, fail := range failures {
		if fail.UID != uint32(uids[i]) || fail.Side != side || !strings.Contains(fail.Reason, words[i]) {
			t.Errorf("run %d: folder %s failure %+v, want UID %d on the %s with %q", run, f.Source, fail, uids[i], side, words[i])
		}
	}
}

// TestServersWithoutSpecialUseKeepLookalikeFoldersApart migrates from a
// server without SPECIAL-USE (RFC 6154: no role attributes in LIST) that
// has Drafts and Entwürfe, Sent and Gesendete Objekte, each with mail of
// its own, to a Dovecot whose Drafts and Sent folders carry their roles.
// The engine guesses the roles by name (Drafts beats Entwürfe, Sent beats
// Gesendete Objekte): whatever the order LIST gives (RFC 9051 §6.3.9
// promises none), each source folder gets a destination folder of its
// own, every message arrives once, and two more runs copy nothing and
// leave the destination as it was.
func TestServersWithoutSpecialUseKeepLookalikeFoldersApart(t *testing.T) {
	t.Parallel()
	// Where each source folder lands, as imaptest names destination
	// folders: by role where they have one.
	landing := map[string]string{"INBOX": "INBOX", "Drafts": `\Drafts`, "Entwürfe": "Entwürfe",
		"Sent": `\Sent`, "Gesendete Objekte": "Gesendete Objekte"}
	for _, layout := range []imaptest.Layout{imaptest.LayoutSlash, imaptest.LayoutDotInbox} {
		for _, order := range [][]string{
			{"Drafts", "Entwürfe", "Sent", "Gesendete Objekte"},
			{"Gesendete Objekte", "Sent", "Entwürfe", "Drafts"},
		} {
			t.Run(fmt.Sprintf("to %v, %s listed first", layout, order[0]), func(t *testing.T) {
				t.Parallel()
				src := startFaultServer(t, faultOptions{Folders: listed(order...)}) // no SPECIAL-USE
				dst := imaptest.StartDovecot(t, imaptest.Options{Layout: layout, Users: map[string]string{"alice": "pw"}})
				var want []imaptest.Message
				for i, folder := range append([]string{"INBOX"}, order...) {
					tag := fmt.Sprintf("f%d", i)
					msgs, _ := srvSeed(t, src, folder, landing[folder],
						srvMessage(tag+"-a", 2*i, imap.FlagSeen), srvMessage(tag+"-b", 2*i+1, imap.FlagDraft, "$Label1"))
					want = append(want, msgs...)
				}
				job := srvJob(src.side(), dovecotSide(dst, "alice", "pw"), Tuning{Tries: 1})

				first := srvRun(t, job, 1)
				wantVerified(t, first, 1)
				if int(first.MessagesCopied) != len(want) || int(first.MessagesFailed) != 0 {
					t.Errorf("run 1 copied %d, failed %d; want %d, 0", first.MessagesCopied, first.MessagesFailed, len(want))
				}
				seen := map[string]string{}
				for _, f := range first.Folders {
					if other, taken := seen[f.Destination]; taken {
						t.Errorf("%s and %s both went to %s", other, f.Source, f.Destination)
					}
					seen[f.Destination] = f.Source
					if w := layout.MailboxName(landing[f.Source]); f.Destination != w {
						t.Errorf("%s went to %s, want %s", f.Source, f.Destination, w)
					}
				}
				after := dst.Read(t, "alice")
				wantMail(t, "destination after run 1", want, after.Messages)

				for run := 2; run <= 3; run++ {
					res := srvRun(t, job, run)
					wantVerified(t, res, run)
					if res.MessagesCopied != 0 || res.MessagesTotal != 0 {
						t.Errorf("run %d: %+v, want nothing copied", run, res.Progress)
					}
					if diff := imaptest.Diff(after, dst.Read(t, "alice")); len(diff) > 0 {
						t.Fatalf("run %d changed the destination:\n%s", run, strings.Join(diff, "\n"))
					}
				}
			})
		}
	}
}

// TestServersWithoutSpecialUseAsDestination migrates the other way: from
// a Dovecot whose Drafts and Sent Items announce their roles to a server
// without SPECIAL-USE that has Drafts, Entwürfe, Sent and Gesendete
// Objekte already, in either LIST order, and some mail of the user's in
// Drafts. The roles go to the folders guessed by name, the look-alikes
// keep their own, nothing is merged, the user's mail stays, and re-runs
// copy nothing twice.
func TestServersWithoutSpecialUseAsDestination(t *testing.T) {
	t.Parallel()
	// Source folder (imaptest's name) → destination folder.
	landing := map[string]string{"INBOX": "INBOX", `\Drafts`: "Drafts", "Entwürfe": "Entwürfe",
		`\Sent`: "Sent", "Gesendete Objekte": "Gesendete Objekte"}
	for _, order := range [][]string{
		{"Drafts", "Entwürfe", "Sent", "Gesendete Objekte"},
		{"Gesendete Objekte", "Entwürfe", "Sent", "Drafts"},
	} {
		t.Run(order[0]+" listed first", func(t *testing.T) {
			t.Parallel()
			src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw"}})
			dst := startFaultServer(t, faultOptions{Folders: listed(order...)}) // no SPECIAL-USE
			theirs, _ := srvSeed(t, dst, "Drafts", "Drafts", srvMessage("theirs", 40, imap.FlagDraft))
			var corpus imaptest.Corpus
			want := slices.Clone(theirs)
			for i, folder := range []string{"INBOX", `\Drafts`, "Entwürfe", `\Sent`, "Gesendete Objekte"} {
				for j, flags := range [][]imap.Flag{{imap.FlagSeen}, {imap.FlagDraft, "$Label1"}} {
					m := srvMessage(fmt.Sprintf("f%d-%d", i, j), 2*i+j, flags...)
					corpus.Messages = append(corpus.Messages, imaptest.Message{Folder: folder, Flags: m.Flags, Date: m.Date, Body: []byte(m.Body)})
					want = append(want, corpusMessages(landing[folder], []faultMessage{m})...)
				}
			}
			src.Load(t, "alice", corpus)
			job := srvJob(dovecotSide(src, "alice", "pw"), dst.side(), Tuning{Tries: 1})

			first := srvRun(t, job, 1)
			wantVerified(t, first, 1)
			if int(first.MessagesCopied) != len(corpus.Messages) {
				t.Errorf("run 1 copied %d, want %d", first.MessagesCopied, len(corpus.Messages))
			}
			seen := map[string]string{}
			for _, f := range first.Folders {
				if other, taken := seen[f.Destination]; taken {
					t.Errorf("%s and %s both went to %s", other, f.Source, f.Destination)
				}
				seen[f.Destination] = f.Source
			}
			for source, destination := range map[string]string{"Drafts": "Drafts", "Sent Items": "Sent",
				"Entwürfe": "Entwürfe", "Gesendete Objekte": "Gesendete Objekte"} {
				if got := folderResult(t, first, source).Destination; got != destination {
					t.Errorf("%s went to %s, want %s", source, got, destination)
				}
			}
			got, folders := dst.allMail(t)
			wantMail(t, "destination after run 1", want, got)

			for run := 2; run <= 3; run++ {
				res := srvRun(t, job, run)
				wantVerified(t, res, run)
				if res.MessagesCopied != 0 || res.MessagesTotal != 0 {
					t.Errorf("run %d: %+v, want nothing copied", run, res.Progress)
				}
				again, againFolders := dst.allMail(t)
				wantMail(t, fmt.Sprintf("destination after run %d", run), want, again)
				if !slices.Equal(folders, againFolders) {
					t.Errorf("run %d: destination folders %q, were %q", run, againFolders, folders)
				}
			}
		})
	}
}

// TestServersDestinationWithoutLiteralPlusRefusesMessagesAlone copies to
// a destination without LITERAL+ (RFC 7888), which asks for every
// message's literal (RFC 9051 §7.5), and refuses two: one over its size
// limit before asking for it (NO [TOOBIG], RFC 7889 §4), and one with a
// tagged NO after reading it. The account completes in a single attempt
// (the APPEND connection is kept), the two are recorded as the
// destination's refusals, the rest is copied once; a re-run tries them
// again and copies nothing else; once the second refusal is lifted, the
// next run copies exactly that message.
func TestServersDestinationWithoutLiteralPlusRefusesMessagesAlone(t *testing.T) {
	t.Parallel()
	var refusing atomic.Bool
	refusing.Store(true)
	policy := &imap.Error{Type: imap.StatusResponseTypeNo, Code: "LIMIT", Text: "Refused by policy"}
	dst := startFaultServer(t, faultOptions{
		Caps:        faultCaps(imap.CapNamespace, imap.CapUIDPlus), // no LITERAL+ nor LITERAL-
		AppendLimit: 4000,
		RefuseAppend: func(body []byte) error {
			if refusing.Load() && bytes.Contains(body, []byte("refuse-me")) {
				return policy
			}
			return nil
		},
	})
	src := startFaultServer(t, faultOptions{Folders: listed("Later")})
	msgs := make([]faultMessage, 8)
	for i := range msgs {
		msgs[i] = srvMessage(fmt.Sprint("inbox-", i), i, imap.FlagSeen)
	}
	const refused, big = 2, 5
	msgs[refused] = srvMessage("refuse-me", refused, imap.FlagFlagged)
	msgs[big].Body = mail("big@servers.test", "big", 6000)
	inbox, uids := srvSeed(t, src, "INBOX", "INBOX", msgs...)
	later, _ := srvSeed(t, src, "Later", "Later", srvMessage("later-0", 20), srvMessage("later-1", 21, imap.FlagAnswered))
	job := srvJob(src.side(), dst.side(), Tuning{Tries: 1})

	for run, want := range []struct {
		copied int
		failed []int // indexes in msgs
	}{
		{copied: len(msgs) - 2 + len(later), failed: []int{refused, big}},
		{copied: 0, failed: []int{refused, big}},
		{copied: 1, failed: []int{big}}, // the refusal lifted
		{copied: 0, failed: []int{big}},
	} {
		run++
		if run == 3 {
			refusing.Store(false)
		}
		res := srvRun(t, job, run)
		if int(res.MessagesCopied) != want.copied || int(res.MessagesFailed) != len(want.failed) {
			t.Errorf("run %d copied %d, failed %d; want %d, %d", run, res.MessagesCopied, res.MessagesFailed, want.copied, len(want.failed))
		}
		f := folderResult(t, res, "INBOX")
		var failedUIDs []imap.UID
		var words []string
		for _, i := range want.failed {
			failedUIDs = append(failedUIDs, uids[i])
			words = append(words, map[int]string{refused: "Refused by policy", big: "TOOBIG"}[i])
		}
		wantFailures(t, run, f, "destination", failedUIDs, words)
		if f.Verified() || f.Missing() != len(want.failed) || f.SourceMessages != len(msgs) {
			t.Errorf("run %d: INBOX %+v; want %d covered, %d missing, not verified", run, f, len(msgs), len(want.failed))
		}
		if l := folderResult(t, res, "Later"); !l.Verified() {
			t.Errorf("run %d: Later %+v not verified", run, l)
		}
		got, _ := dst.allMail(t)
		wantMail(t, fmt.Sprintf("destination after run %d", run), append(without(inbox, want.failed...), later...), got)
	}
}

// makeReadable lifts RefuseFetch: every message can be read from now on.
func (fs *faultServer) makeReadable() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.folders {
		clear(f.unreadable)
	}
}

// TestServersSourceWithUnreadableMessages reads from a source that cannot
// read two messages of INBOX: a FETCH of their bodies answers the others,
// then NO, as Exchange does ("could not be converted to an RFC-822
// compatible format"). The folder goes on, the two are recorded as the
// source's, the folder after it is copied, the account completes in one
// attempt; once the messages can be read, the next run copies exactly
// them. Also when the destination holds mail of the user's already, which
// the engine compares by identity with what it copies (docs/design.md#identity).
func TestServersSourceWithUnreadableMessages(t *testing.T) {
	t.Parallel()
	for _, theirs := range []bool{false, true} {
		t.Run(fmt.Sprintf("mail on the destination %v", theirs), func(t *testing.T) {
			t.Parallel()
			src := startFaultServer(t, faultOptions{Folders: listed("Later"),
				RefuseFetch: func(body []byte) bool { return bytes.Contains(body, []byte("unreadable")) }})
			dst := startFaultServer(t, faultOptions{})
			var want []imaptest.Message
			if theirs {
				want, _ = srvSeed(t, dst, "INBOX", "INBOX", srvMessage("theirs", 30, imap.FlagSeen))
			}
			msgs := make([]faultMessage, 8)
			for i := range msgs {
				msgs[i] = srvMessage(fmt.Sprint("inbox-", i), i, imap.FlagSeen)
			}
			unreadable := []int{1, 6}
			for _, i := range unreadable {
				msgs[i] = srvMessage(fmt.Sprint("unreadable-", i), i, imap.FlagFlagged)
			}
			inbox, uids := srvSeed(t, src, "INBOX", "INBOX", msgs...)
			later, _ := srvSeed(t, src, "Later", "Later", srvMessage("later-0", 20), srvMessage("later-1", 21, imap.FlagSeen))
			job := srvJob(src.side(), dst.side(), Tuning{Tries: 1})
			failed := []imap.UID{uids[unreadable[0]], uids[unreadable[1]]}
			words := []string{"could not be converted", "could not be converted"}

			for run := 1; run <= 2; run++ {
				res := srvRun(t, job, run)
				if want := map[int]int{1: len(msgs) - 2 + len(later)}[run]; int(res.MessagesCopied) != want || int(res.MessagesFailed) != 2 {
					t.Errorf("run %d copied %d, failed %d; want %d, 2", run, res.MessagesCopied, res.MessagesFailed, want)
				}
				f := folderResult(t, res, "INBOX")
				wantFailures(t, run, f, "source", failed, words)
				if f.Verified() || f.Missing() != 2 {
					t.Errorf("run %d: INBOX %+v; want 2 missing, not verified", run, f)
				}
				if l := folderResult(t, res, "Later"); !l.Verified() {
					t.Errorf("run %d: Later %+v not verified", run, l)
				}
				got, _ := dst.allMail(t)
				wantMail(t, fmt.Sprintf("destination after run %d", run), append(append(slices.Clone(want), without(inbox, unreadable...)...), later...), got)
			}
			src.makeReadable()
			for run := 3; run <= 4; run++ {
				res := srvRun(t, job, run)
				wantVerified(t, res, run)
				if want := map[int]int{3: 2}[run]; int(res.MessagesCopied) != want || int(res.MessagesFailed) != 0 {
					t.Errorf("run %d copied %d, failed %d; want %d, 0", run, res.MessagesCopied, res.MessagesFailed, want)
				}
				got, _ := dst.allMail(t)
				wantMail(t, fmt.Sprintf("destination after run %d", run), append(append(slices.Clone(want), inbox...), later...), got)
			}
		})
	}
}

// silenceTuning gives up on a silent server after idle, and tries again.
const silenceIdle = 500 * time.Millisecond

var silenceTuning = Tuning{IdleTimeout: silenceIdle, Tries: 3, Backoff: 10 * time.Millisecond}

// TestServersDestinationSilentInAppend: the destination stops answering
// in the middle of the third APPEND's literal, with LITERAL+ (the bodies
// of the APPENDs after it are on the wire already) and without (the
// engine waits for each continuation request, RFC 9051 §7.5). The attempt
// fails after the idle timeout, the next one completes, and the
// destination holds each message once: the half-sent one is neither lost
// nor duplicated. A second run copies nothing.
func TestServersDestinationSilentInAppend(t *testing.T) {
	t.Parallel()
	for _, literalPlus := range []bool{true, false} {
		t.Run(fmt.Sprintf("LITERAL+ %v", literalPlus), func(t *testing.T) {
			t.Parallel()
			caps := faultCaps(imap.CapNamespace, imap.CapUIDPlus, imap.CapListExtended)
			if literalPlus {
				caps[imap.CapLiteralPlus] = struct{}{}
			}
			const silentIn = 3
			dst := startFaultServer(t, faultOptions{Caps: caps, SilentInAppend: silentIn})
			src := startFaultServer(t, faultOptions{})
			msgs := make([]faultMessage, 10)
			for i := range msgs {
				msgs[i] = srvMessage(fmt.Sprint("m", i), i, imap.FlagSeen)
				msgs[i].Body = mail(fmt.Sprintf("m%d@servers.test", i), "message", 3000+i)
			}
			want, uids := srvSeed(t, src, "INBOX", "INBOX", msgs...)
			job := srvJob(src.side(), dst.side(), silenceTuning)

			start := time.Now()
			res := srvRun(t, job, 1)
			elapsed := time.Since(start)
			// Struck: the silent APPEND was sent again, after an idle timeout.
			if n := dst.appends.Load(); n <= int64(len(msgs)) || elapsed < silenceIdle {
				t.Fatalf("%d APPENDs for %d messages in %s: the silence did not strike", n, len(msgs), elapsed)
			}
			if elapsed > 4*silenceIdle {
				t.Errorf("run 1 took %s with an idle timeout of %s", elapsed, silenceIdle)
			}
			// The APPENDs before the silent one were answered OK: their
			// messages were copied by this run, and they are not in doubt.
			if int(res.MessagesCopied) != len(msgs) {
				t.Errorf("run 1 copied %d, want %d (skipped %d)", res.MessagesCopied, len(msgs), res.MessagesSkipped)
			}
			states, _ := job.State.FolderStates(t.Context())
			if inDoubt := states["INBOX"].InDoubt; slices.ContainsFunc(uids[:silentIn-1], func(uid imap.UID) bool {
				return slices.Contains(inDoubt, uint32(uid))
			}) {
				t.Errorf("in doubt after run 1: %v, though the APPENDs of UIDs %v were answered", inDoubt, uids[:silentIn-1])
			}
			got, _ := dst.allMail(t)
			wantMail(t, "destination after run 1", want, got)
			t.Logf("run 1: %s, %d APPENDs for %d messages", elapsed.Round(time.Millisecond), dst.appends.Load(), len(msgs))

			if res := srvRun(t, job, 2); res.MessagesCopied != 0 {
				t.Errorf("run 2 copied %d", res.MessagesCopied)
			}
			got, _ = dst.allMail(t)
			wantMail(t, "destination after run 2", want, got)
		})
	}
}

// TestServersSourceSilentInFetch: the source stops answering in the
// middle of the body FETCH of the second folder, after its first message.
// The attempt fails after the idle timeout, the message that went through
// is settled, the next attempt copies the rest of that folder only, and
// each message is on the destination once. A second run copies nothing.
func TestServersSourceSilentInFetch(t *testing.T) {
	t.Parallel()
	const silentIn = 2 // INBOX's FETCH, then Later's
	src := startFaultServer(t, faultOptions{Folders: listed("Later"), SilentInFetch: silentIn})
	dst := startFaultServer(t, faultOptions{})
	var want []imaptest.Message
	for i, folder := range []string{"INBOX", "Later"} {
		var msgs []faultMessage
		for j := range 6 {
			msgs = append(msgs, srvMessage(fmt.Sprintf("%s-%d", folder, j), 6*i+j, imap.FlagSeen))
		}
		seeded, _ := srvSeed(t, src, folder, folder, msgs...)
		want = append(want, seeded...)
	}
	job := srvJob(src.side(), dst.side(), silenceTuning)

	start := time.Now()
	res := srvRun(t, job, 1)
	elapsed := time.Since(start)
	if n := src.fetches.Load(); n <= silentIn || elapsed < silenceIdle {
		t.Fatalf("%d body FETCHes in %s: the silence did not strike", n, elapsed)
	}
	if elapsed > 4*silenceIdle {
		t.Errorf("run 1 took %s with an idle timeout of %s", elapsed, silenceIdle)
	}
	wantVerified(t, res, 1)
	if int(res.MessagesCopied) != len(want) {
		t.Errorf("run 1 copied %d, want %d", res.MessagesCopied, len(want))
	}
	got, _ := dst.allMail(t)
	wantMail(t, "destination after run 1", want, got)
	t.Logf("run 1: %s, %d body FETCHes", elapsed.Round(time.Millisecond), src.fetches.Load())

	if res := srvRun(t, job, 2); res.MessagesCopied != 0 {
		t.Errorf("run 2 copied %d", res.MessagesCopied)
	}
	got, _ = dst.allMail(t)
	wantMail(t, "destination after run 2", want, got)
}

// TestServersDestinationWithoutUIDPlus copies to a destination without
// UIDPLUS: no APPENDUID tells the copies' UIDs (RFC 4315 §3), so the
// engine finds them by identity right after, among them byte-identical
// twins and messages without a Message-ID. The first run copies all, the
// next two nothing, and a run that lost its state copies nothing either.
func TestServersDestinationWithoutUIDPlus(t *testing.T) {
	t.Parallel()
	dst := startFaultServer(t, faultOptions{Caps: faultCaps(imap.CapNamespace, imap.CapListExtended, imap.CapLiteralPlus)})
	if dst.dial(t).Caps().Has(imap.CapUIDPlus) {
		t.Fatal("the destination announces UIDPLUS")
	}
	src := startFaultServer(t, faultOptions{Folders: listed("Projects")})
	var want []imaptest.Message
	for i, folder := range []string{"INBOX", "Projects"} {
		twin := srvMessage(folder+"-twin", 10*i, imap.FlagSeen, imap.FlagFlagged)
		msgs := []faultMessage{srvMessage(folder+"-0", 10*i+1, imap.FlagSeen), twin,
			srvMessage("", 10*i+2, imap.FlagAnswered), srvMessage(folder+"-3", 10*i+3), twin,
			srvMessage("", 10*i+4, imap.FlagSeen, "$Label1")}
		seeded, _ := srvSeed(t, src, folder, folder, msgs...)
		want = append(want, seeded...)
	}
	job := srvJob(src.side(), dst.side(), Tuning{Tries: 1})
	for run := 1; run <= 4; run++ {
		if run == 4 {
			job.State = syncstate.NewMemoryState() // lost
		}
		res := srvRun(t, job, run)
		wantVerified(t, res, run)
		if want := map[int]int{1: len(want)}[run]; int(res.MessagesCopied) != want {
			t.Errorf("run %d copied %d, want %d", run, res.MessagesCopied, want)
		}
		got, _ := dst.allMail(t)
		wantMail(t, fmt.Sprintf("destination after run %d", run), want, got)
	}
}

// TestServersSourceWithoutLiteralPlus reads from a source without
// LITERAL+: the password, 8-bit, goes as a synchronizing literal (RFC
// 9051 §4.3: no quoted string in IMAP4rev1 holds 8-bit characters), which
// the source refuses to take unasked; the bodies come as literals the
// other way. Without LIST-EXTENDED too, where the source's subscriptions
// come by LSUB on a connection of the engine's own. Everything is copied
// once with its flags, subscriptions too, and a re-run copies nothing.
func TestServersSourceWithoutLiteralPlus(t *testing.T) {
	t.Parallel()
	for _, listExtended := range []bool{true, false} {
		t.Run(fmt.Sprintf("LIST-EXTENDED %v", listExtended), func(t *testing.T) {
			t.Parallel()
			caps := faultCaps(imap.CapNamespace, imap.CapUIDPlus)
			if listExtended {
				caps[imap.CapListExtended] = struct{}{}
			}
			src := startFaultServer(t, faultOptions{Caps: caps, Password: "pässwort", Login: "jürgen",
				Folders: []imap.ListData{{Mailbox: "Entwürfe", Attrs: []imap.MailboxAttr{imap.MailboxAttrSubscribed}},
					{Mailbox: "Reports & Invoices"}}})
			if caps := src.dial(t).Caps(); caps.Has(imap.CapLiteralPlus) || caps.Has(imap.CapLiteralMinus) {
				t.Fatalf("the source announces %v", caps)
			}
			dst := startFaultServer(t, faultOptions{})
			var want []imaptest.Message
			for i, folder := range []string{"INBOX", "Entwürfe", "Reports & Invoices"} {
				big := srvMessage(fmt.Sprint("big-", i), 3*i+2, imap.FlagSeen)
				big.Body = string(bigMessage(200_000 + i))
				seeded, _ := srvSeed(t, src, folder, folder, srvMessage(fmt.Sprint("small-", i), 3*i, imap.FlagSeen, "$Label1"),
					srvMessage(fmt.Sprint("draft-", i), 3*i+1, imap.FlagDraft), big)
				want = append(want, seeded...)
			}
			job := srvJob(src.side(), dst.side(), Tuning{Tries: 1})
			for run := 1; run <= 2; run++ {
				res := srvRun(t, job, run)
				wantVerified(t, res, run)
				if w := map[int]int{1: len(want)}[run]; int(res.MessagesCopied) != w {
					t.Errorf("run %d copied %d, want %d", run, res.MessagesCopied, w)
				}
				got, _ := dst.allMail(t)
				wantMail(t, fmt.Sprintf("destination after run %d", run), want, got)
			}
			if !dst.isSubscribed("Entwürfe") || dst.isSubscribed("Reports & Invoices") {
				t.Errorf("destination subscriptions: Entwürfe %v, Reports & Invoices %v; want only Entwürfe",
					dst.isSubscribed("Entwürfe"), dst.isSubscribed("Reports & Invoices"))
			}
		})
	}
}

// isSubscribed tells whether folder of fs is subscribed.
func (fs *faultServer) isSubscribed(folder string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.folder(folder).subscribed
}

// A destination that keeps only some keywords (PERMANENTFLAGS without
// "\*"): the others are left out, named once in the folder's result (the
// first run), not at every run, and never make a re-run copy or store
// anything.
func TestServersDestinationKeepingFewKeywords(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "old-pw"}})
	msgs := numbered(6)
	for i := range msgs {
		msgs[i].Flags = []imap.Flag{imap.FlagSeen, "$Label1", "Work"}
	}
	src.Load(t, "alice", imaptest.Corpus{Messages: msgs})
	dst := startFaultServer(t, faultOptions{PermanentFlags: []imap.Flag{imap.FlagSeen, imap.FlagAnswered,
		imap.FlagFlagged, imap.FlagDeleted, imap.FlagDraft, "$Label1"}})
	job := Job{Source: dovecotSide(src, "alice", "old-pw"), Destination: dst.side(), State: syncstate.NewMemoryState()}
	for run, want := range [][]string{{"Work"}, nil, nil} {
		res, err := Migrate(t.Context(), job)
		if err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		inbox := folderResult(t, res, "INBOX")
		if !slices.Equal(inbox.DroppedKeywords, want) || !inbox.Verified() || int(res.MessagesCopied) != map[int]int{0: 6}[run] {
			t.Errorf("run %d: INBOX %+v, copied %d; want keywords %v reported, verified", run+1, inbox, res.MessagesCopied, want)
		}
	}
	for _, m := range dst.read(t, "INBOX") {
		if !slices.EqualFunc(m.Flags, []imap.Flag{"$Label1", imap.FlagSeen}, func(a, b imap.Flag) bool { return canonicalFlag(a) == canonicalFlag(b) }) {
			t.Errorf("destination message flags %v, want $Label1 and \\Seen", m.Flags)
		}
	}
}

// A destination that logs out clients idle for half a second, and a
// folder copied for longer than that (the source is slow): the APPENDs
// go on the destination's one session, which is never idle, so the run
// succeeds in one attempt. A second session for the APPENDs would leave
// the first idle, to be closed by the server.
func TestServersOneDestinationSessionIsNeverIdle(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "old-pw"}})
	src.Load(t, "alice", imaptest.Corpus{Messages: numbered(300)})
	host, port := imaptest.SlowProxy(t, src.Addr(), 150_000)
	dst := startFaultServer(t, faultOptions{IdleTimeout: 500 * time.Millisecond})
	job := Job{Source: dovecotSide(src, "alice", "old-pw"), Destination: dst.side(), State: syncstate.NewMemoryState(),
		Tuning: Tuning{Tries: 1}}
	job.Source.Host, job.Source.Port = host, port
	start := time.Now()
	res, err := Migrate(t.Context(), job)
	t.Logf("%s, copied %d, %v", time.Since(start).Round(time.Millisecond), res.MessagesCopied, err)
	if time.Since(start) < time.Second {
		t.Fatalf("the copy took %s: too short for the destination to find a session idle", time.Since(start))
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := len(dst.read(t, "INBOX")); got != 300 {
		t.Errorf("destination holds %d messages, want 300", got)
	}
	if logins := dst.logins(); logins != 1 {
		t.Errorf("the destination took %d logins, want 1", logins)
	}
}

// A folder the destination refuses to create fails alone, and its result
// names the side that refused and that side's login, host and port; the
// other folders are copied.
func TestServersRefusedFolderNamesItsSide(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300) // over Dovecot's limit for a name
	src := startFaultServer(t, faultOptions{Folders: []imap.ListData{{Mailbox: long}, {Mailbox: "Projects"}}})
	src.seed(t, long, faultMessage{Body: mail("long@example.com", "long", 600)})
	src.seed(t, "Projects", faultMessage{Body: mail("p@example.com", "projects", 600)})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "new-pw"}})
	res, err := Migrate(t.Context(), Job{Source: src.side(), Destination: dovecotSide(dst, "alice", "new-pw"), State: syncstate.NewMemoryState()})
	if err != nil {
		t.Fatal(err)
	}
	refused := folderResult(t, res, long)
	wantPrefix := fmt.Sprintf("destination alice at %s: refused: ", dst.Addr())
	if refused.ErrorSide != "destination" || !strings.HasPrefix(refused.Error, wantPrefix) {
		t.Errorf("the refused folder: side %q, error %q; want the destination, starting %q", refused.ErrorSide, refused.Error, wantPrefix)
	}
	if projects := folderResult(t, res, "Projects"); !projects.Verified() || projects.Error != "" {
		t.Errorf("Projects: %+v", projects)
	}
}
