package transfer

import (
	"reflect"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// Source-only deltas (docs/design.md#source-only-deltas): a delta pass
// whose source is as the last complete pass left it ends at the source.

// deltaPair is a pair of Dovecots after a first copy of two folders and
// a pass that looked at both sides, whose result a source-only delta
// must match.
func deltaPair(t *testing.T) (*dovecotPair, Result) {
	t.Helper()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	msgs := numbered(12)
	for i := range msgs[8:] {
		msgs[8+i].Folder = "Archive"
	}
	p.src.Load(t, "alice", imaptest.Corpus{Messages: msgs})
	results := p.runTimes(t, 2)
	p.job.SourceOnlyDelta = true
	return p, results[1]
}

// sourceOnly runs a source-only delta and says whether it logged in to
// the destination.
func (p *dovecotPair) sourceOnly(t *testing.T) (Result, bool) {
	t.Helper()
	before := p.dst.Logins(t, "alice@new")
	res := p.runTimes(t, 1)[0]
	return res, p.dst.Logins(t, "alice@new") > before
}

func TestSourceOnlyDeltaOfAnUnchangedSource(t *testing.T) {
	t.Parallel()
	p, both := deltaPair(t)
	sourceLogins := p.src.Logins(t, "alice")
	res, destination := p.sourceOnly(t)
	if destination {
		t.Error("an unchanged source's delta logged in to the destination")
	}
	if n := p.src.Logins(t, "alice") - sourceLogins; n != 1 {
		t.Errorf("%d logins to the source, want one", n)
	}
	if res.Progress != both.Progress {
		t.Errorf("figures %+v, want those of a pass that looked at both sides: %+v", res.Progress, both.Progress)
	}
	if len(res.Folders) != len(both.Folders) {
		t.Fatalf("%d folders reported, want %d", len(res.Folders), len(both.Folders))
	}
	for i, f := range res.Folders {
		if !f.SourceOnly {
			t.Errorf("folder %s is not reported as judged from the source alone", f.Source)
		}
		f.SourceOnly = false
		if !reflect.DeepEqual(f, both.Folders[i]) || !f.Unchanged {
			t.Errorf("folder %+v, want %+v", f, both.Folders[i])
		}
	}
}

// Anything that changed on the source opens the destination: new mail, a
// flag, a new folder; each reaches it.
func TestSourceOnlyDeltaOfAChangedSource(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(t *testing.T, p *dovecotPair)
	}{
		{"new message", func(t *testing.T, p *dovecotPair) {
			p.src.Load(t, "alice", imaptest.Corpus{Messages: []imaptest.Message{numbered(20)[15]}})
		}},
		{"flag", func(t *testing.T, p *dovecotPair) {
			storeFlags(t, p.src.Login(t, "alice", "old-pw"), "Archive", imap.StoreFlagsAdd, imap.FlagFlagged)
		}},
		{"new folder", func(t *testing.T, p *dovecotPair) {
			m := numbered(20)[16]
			m.Folder = "Projects"
			p.src.Load(t, "alice", imaptest.Corpus{Messages: []imaptest.Message{m}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, _ := deltaPair(t)
			c.change(t, p)
			if _, destination := p.sourceOnly(t); !destination {
				t.Error("the delta did not look at the destination")
			}
			p.wantExact(t)
		})
	}
}

// The trade-off: a message deleted on the destination alone is not seen
// by a source-only delta; a pass that looks at both sides (the final
// pass, a verifying pass) copies it again.
func TestSourceOnlyDeltaLeavesDestinationChangesToTheFinalPass(t *testing.T) {
	t.Parallel()
	p, _ := deltaPair(t)
	p.dst.ExpungeFirst(t, "alice@new", "new-pw")
	if res, destination := p.sourceOnly(t); destination || res.MessagesCopied != 0 {
		t.Errorf("the delta logged in to the destination (%t) or copied %d: it should trust the source", destination, res.MessagesCopied)
	}
	p.job.SourceOnlyDelta = false
	if res := p.runTimes(t, 1)[0]; res.MessagesCopied != 1 {
		t.Errorf("the verifying pass copied %d, want the message deleted on the destination", res.MessagesCopied)
	}
	p.wantExact(t)
}

// A first pass has no state to trust: it opens both sides.
func TestSourceOnlyDeltaOfAFirstPass(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.Load(t, "alice", imaptest.Corpus{Messages: numbered(5)})
	p.job.SourceOnlyDelta = true
	if res := p.runTimes(t, 1)[0]; res.MessagesCopied != 5 {
		t.Errorf("copied %d of 5", res.MessagesCopied)
	}
	p.wantExact(t)
}
