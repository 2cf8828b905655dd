package transfer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// munge8bit rewrites a message as Cyrus does with munge8bit on: every
// 8-bit byte of its header becomes "X", the size unchanged.
func munge8bit(body []byte) []byte {
	end := bytes.Index(body, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(body)
	}
	out := bytes.Clone(body)
	for i := range out[:end] {
		if out[i] >= 0x80 {
			out[i] = 'X'
		}
	}
	return out
}

// TestRewritingDestinationIsReported: a destination that rewrites the
// 8-bit bytes of headers (same size) and one that adds a header (another
// size) hold every copy, but the copies read back unlike what was sent:
// the folder is not verified, and names each altered copy with its
// subject and what changed; the untouched copies are not named. A task
// that counts copies only does not read them back.
func TestRewritingDestinationIsReported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		rewrite func([]byte) []byte
		altered []string // subjects
		what    string
		counts  bool // the task counts copies only (verify_copies counts)
		bodies  bool // the task compares whole bodies (verify_copies full)
	}{
		{"counted only", munge8bit, nil, "", true, false},
		{"8-bit header bytes", munge8bit, []string{"Café au lait", "Grüße"}, "its header was rewritten (same size, other bytes)", false, false},
		{"8-bit header bytes, whole bodies compared", munge8bit, []string{"Café au lait", "Grüße"}, "its header was rewritten (same size, other bytes)", false, true},
		{"a header added", func(body []byte) []byte { return append([]byte("X-Scanned: clean\r\n"), body...) },
			[]string{"plain", "Café au lait", "Grüße"}, "its size went from", false, false},
		// A body byte changed, the size and header kept: only whole bodies tell.
		{"a body byte, headers compared", lastByteChanged, nil, "", false, false},
		{"a body byte, whole bodies compared", lastByteChanged, []string{"plain", "Café au lait", "Grüße"}, "its body was rewritten (same size and header, other bytes)", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := sourceOfThreeSubjects(t)
			dst := startFaultServer(t, faultOptions{RewriteAppend: tc.rewrite})
			job := srvJob(src.side(), dst.side(), Tuning{})
			job.Options.SkipReadBack = tc.counts
			job.Options.ReadBackBodies = tc.bodies
			res := srvRun(t, job, 1)
			if len(dst.read(t, "INBOX")) != 3 {
				t.Fatalf("the destination holds %d messages, want all 3", len(dst.read(t, "INBOX")))
			}
			var inbox FolderResult
			for _, f := range res.Folders {
				if f.Source == "INBOX" {
					inbox = f
				}
			}
			if inbox.Verified() != (len(tc.altered) == 0) {
				t.Errorf("INBOX verified %t; want %t: read back, rewritten copies are not verified; counted, they are", inbox.Verified(), tc.counts)
			}
			var subjects []string
			for _, a := range inbox.Altered {
				subjects = append(subjects, a.Subject)
				if !strings.HasPrefix(a.What, tc.what) || a.DestinationUID == 0 {
					t.Errorf("altered copy %+v, want %q", a, tc.what)
				}
			}
			if strings.Join(subjects, "|") != strings.Join(tc.altered, "|") {
				t.Errorf("altered copies %q, want %q", subjects, tc.altered)
			}
		})
	}
}

// sourceOfThreeSubjects is a source whose INBOX holds three messages
// without a Message-ID, two of them with 8-bit bytes in their Subject:
// "plain", "Café au lait" and "Grüße".
func sourceOfThreeSubjects(t *testing.T) *faultServer {
	t.Helper()
	src := startFaultServer(t, faultOptions{})
	var msgs []faultMessage
	for i, subject := range []string{"plain", "Café au lait", "Grüße"} {
		m := srvMessage("", i+1)
		m.Body = mail("", subject, 300+i)
		msgs = append(msgs, m)
	}
	src.seed(t, "INBOX", msgs...)
	return src
}

// lastByteChanged rewrites the last byte of a body before its final line
// break, keeping its size and header, as a gateway that re-encodes a body
// at the same length would.
func lastByteChanged(body []byte) []byte {
	out := append([]byte(nil), body...)
	i := len(out) - 3 // before "\r\n"
	if out[i] == 'x' {
		out[i] = 'y'
	} else {
		out[i] = 'x'
	}
	return out
}

// TestWholeBodiesReadBackOnDovecot: compared whole, every copy a real
// Dovecot took, a large one too, is found as sent.
func TestWholeBodiesReadBackOnDovecot(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 12, Messages: 60, LargeMessages: 1, LargeSize: 3 << 20})
	p.src.Load(t, "alice", corpus)
	p.job.Options.ReadBackBodies = true
	res := p.migrate(t) // fails t unless every folder is verified
	for _, f := range res.Folders {
		if len(f.Altered) > 0 {
			t.Errorf("folder %s: %d copies read back as altered: %+v", f.Source, len(f.Altered), f.Altered[0])
		}
	}
	if int(res.MessagesCopied) != len(corpus.Messages) {
		t.Errorf("copied %d of %d", res.MessagesCopied, len(corpus.Messages))
	}
}

// TestAVerifyingPassReadsBackEarlierCopies: copies an earlier pass made
// and did not read back (verify_copies counts) into a destination that
// rewrites 8-bit header bytes are found by a verifying pass
// (Job.ReadBackAll), which compares every copy with its source message,
// at headers or whole; the untouched copies are not named. A delta pass
// after it reads nothing back again, and still reports them.
func TestAVerifyingPassReadsBackEarlierCopies(t *testing.T) {
	t.Parallel()
	for _, bodies := range []bool{false, true} {
		t.Run(map[bool]string{false: "headers", true: "whole bodies"}[bodies], func(t *testing.T) {
			t.Parallel()
			src := sourceOfThreeSubjects(t)
			dst := startFaultServer(t, faultOptions{RewriteAppend: munge8bit})
			job := srvJob(src.side(), dst.side(), Tuning{})
			job.Options.SkipReadBack, job.Options.ReadBackBodies = true, bodies
			wantVerified(t, srvRun(t, job, 1), 1)

			verifying := job
			verifying.ReadBackAll = true
			inbox := folderResult(t, srvRun(t, verifying, 2), "INBOX")
			var subjects []string
			for _, a := range inbox.Altered {
				subjects = append(subjects, a.Subject)
				if a.What != "its header was rewritten (same size, other bytes)" || a.DestinationUID == 0 {
					t.Errorf("altered copy %+v", a)
				}
			}
			if strings.Join(subjects, "|") != "Café au lait|Grüße" || inbox.Verified() {
				t.Errorf("the verifying pass found the altered copies %q (verified %t); want Café au lait and Grüße, not verified", subjects, inbox.Verified())
			}
			// A delta pass after it reads nothing back, and still reports
			// the altered copies, counted once.
			if later := folderResult(t, srvRun(t, job, 3), "INBOX"); later.AlteredCount != 2 || len(later.Altered) != 2 || later.Verified() {
				t.Errorf("a delta pass after it: %+v; want the 2 altered copies still reported, the folder not verified", later)
			}
		})
	}
}

// TestAVerifyingPassFindsDovecotsCopiesAsSent: on a real Dovecot, a
// verifying pass reads every copy of earlier passes back, whole, a large
// one too, and finds each as its source message, but one that was
// changed on the destination's disk since (same size, a byte of its
// body); once that copy is put back, the next verifying pass clears it.
func TestAVerifyingPassFindsDovecotsCopiesAsSent(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 13, Messages: 60, LargeMessages: 1, LargeSize: 3 << 20})
	p.src.Load(t, "alice", corpus)
	p.job.Options.SkipReadBack = true
	p.migrate(t)
	p.job.ReadBackAll, p.job.Options.ReadBackBodies = true, true
	res := p.migrate(t) // fails t unless every folder is verified
	for _, f := range res.Folders {
		if len(f.Altered) > 0 || f.Unchanged {
			t.Errorf("folder %s: unchanged %t, %d copies read back as altered (%+v); want each read back, none altered", f.Source, f.Unchanged, len(f.Altered), f.Altered)
		}
	}

	var original []byte
	p.dst.AlterStored(t, "alice@new", func(b []byte) []byte { original = b; return lastByteChanged(b) })
	found := func(run string) int {
		t.Helper()
		res, err := Migrate(t.Context(), p.job)
		if err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		altered := 0
		for _, f := range res.Folders {
			altered += f.AlteredCount
			if f.AlteredCount > 0 && (f.Destination != "INBOX" || f.Altered[0].What != "its body was rewritten (same size and header, other bytes)") {
				t.Errorf("%s: folder %s → %s: %+v", run, f.Source, f.Destination, f.Altered)
			}
		}
		return altered
	}
	if n := found("after a copy was changed on disk"); n != 1 {
		t.Errorf("%d copies found altered after one was changed on disk; want 1", n)
	}
	// Put back as it was, the copy is found as sent: the report goes.
	p.dst.AlterStored(t, "alice@new", func([]byte) []byte { return original })
	if n := found("after the copy was put back"); n != 0 {
		t.Errorf("%d copies still altered after the copy was put back; want none", n)
	}
}
