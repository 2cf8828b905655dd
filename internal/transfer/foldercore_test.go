package transfer

import (
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// status is a folder's LIST-STATUS.
func status(messages, uidValidity, uidNext uint32, highestModSeq uint64) *imap.StatusData {
	return &imap.StatusData{NumMessages: &messages, UIDValidity: uidValidity, UIDNext: imap.UID(uidNext), HighestModSeq: highestModSeq}
}

// TestDecideFolder: which folder pairs a pass opens, from the listings and
// the last state alone. A pair is left unopened only when both sides are
// exactly as the last run left them (a flag change shows only with
// CONDSTORE), or when both are empty and nothing is in doubt; anything
// else opens both and compares.
func TestDecideFolder(t *testing.T) {
	t.Parallel()
	const servers, filter = "old:143/ann → new:143/ann", "max=0 since= deleted=false"
	done := syncstate.FolderState{Servers: servers, Destination: "INBOX", Filter: filter, Complete: true,
		UIDValidity: 7, SourceUIDNext: 11, SourceMessages: 10, SourceHighestModSeq: 99,
		DestUIDValidity: 3, DestUIDNext: 21, DestMessages: 10, Covered: 10}
	asLeft := func() folderFacts {
		return folderFacts{prev: done, known: true, servers: servers, filter: filter,
			plan: folderPlan{Source: mailbox{Name: "INBOX", Status: status(10, 7, 11, 99)}, Destination: "INBOX", DestStatus: status(10, 3, 21, 0)}}
	}
	empty := func() folderFacts {
		return folderFacts{servers: servers, filter: filter,
			plan: folderPlan{Source: mailbox{Name: "Drafts", Status: status(0, 5, 1, 1)}, Destination: "Drafts", DestStatus: status(0, 8, 4, 0)}}
	}
	for _, tc := range []struct {
		name  string
		facts func() folderFacts
		want  folderStep
	}{
		{"both sides as left", asLeft, leaveUnchanged},
		{"a new message on the source", func() folderFacts { f := asLeft(); f.plan.Source.Status = status(11, 7, 12, 100); return f }, openAndCompare},
		{"a flag changed on the source", func() folderFacts { f := asLeft(); f.plan.Source.Status = status(10, 7, 11, 100); return f }, openAndCompare},
		// Without CONDSTORE a flag change cannot show: always compared.
		{"a source without HIGHESTMODSEQ", func() folderFacts {
			f := asLeft()
			f.prev.SourceHighestModSeq, f.plan.Source.Status = 0, status(10, 7, 11, 0)
			return f
		}, openAndCompare},
		{"a message expunged on the destination", func() folderFacts { f := asLeft(); f.plan.DestStatus = status(9, 3, 21, 0); return f }, openAndCompare},
		{"a message added on the destination", func() folderFacts { f := asLeft(); f.plan.DestStatus = status(11, 3, 22, 0); return f }, openAndCompare},
		{"the destination folder made anew", func() folderFacts { f := asLeft(); f.plan.DestStatus = status(10, 4, 21, 0); return f }, openAndCompare},
		{"no destination listing", func() folderFacts { f := asLeft(); f.plan.DestStatus = nil; return f }, openAndCompare},
		{"the last run did not finish it", func() folderFacts { f := asLeft(); f.prev.Complete = false; return f }, openAndCompare},
		{"another filter", func() folderFacts { f := asLeft(); f.filter = "max=1000 since= deleted=false"; return f }, openAndCompare},
		{"a state of other servers", func() folderFacts { f := asLeft(); f.known = false; return f }, openAndCompare},
		{"every copy read back", func() folderFacts { f := asLeft(); f.readBackAll = true; return f }, openAndCompare},
		// A source-only delta has the source's word alone.
		{"source-only, source as left", func() folderFacts { f := asLeft(); f.sourceOnly, f.plan.DestStatus = true, nil; return f }, leaveUnchanged},

		{"both empty", empty, recordEmpty},
		{"both empty, a state of other servers", func() folderFacts { f := empty(); f.prev, f.known = done, false; return f }, recordEmpty},
		{"both empty, copies in doubt", func() folderFacts {
			f := empty()
			f.prev, f.known = syncstate.FolderState{InDoubt: []uint32{4}}, true
			return f
		}, openAndCompare},
		{"both empty, the destination to create", func() folderFacts { f := empty(); f.plan.Create = true; return f }, openAndCompare},
		{"both empty, read from All Mail", func() folderFacts { f := empty(); f.plan.Source.Reads = "[Gmail]/All Mail"; return f }, openAndCompare},
		{"the source not empty", func() folderFacts { f := empty(); f.plan.Source.Status = status(1, 5, 2, 2); return f }, openAndCompare},
		{"the destination not empty", func() folderFacts { f := empty(); f.plan.DestStatus = status(1, 8, 5, 0); return f }, openAndCompare},
		{"no counts listed", func() folderFacts { f := empty(); f.plan.Source.Status.NumMessages = nil; return f }, openAndCompare},
		{"both empty, the destination not open", func() folderFacts { f := empty(); f.sourceOnly = true; return f }, openAndCompare},
	} {
		step, state := decideFolder(tc.facts())
		if step != tc.want {
			t.Errorf("%s: step %d, want %d", tc.name, step, tc.want)
		}
		if step == recordEmpty {
			want := syncstate.FolderState{Servers: servers, Destination: "Drafts", Filter: filter, Complete: true,
				UIDValidity: 5, SourceUIDNext: 1, SourceHighestModSeq: 1, DestUIDValidity: 8, DestUIDNext: 4, ForeignBelow: 4}
			if state.Servers != want.Servers || state.Destination != want.Destination || state.Filter != want.Filter || !state.Complete ||
				state.UIDValidity != want.UIDValidity || state.SourceUIDNext != want.SourceUIDNext ||
				state.SourceHighestModSeq != want.SourceHighestModSeq || state.DestUIDValidity != want.DestUIDValidity ||
				state.DestUIDNext != want.DestUIDNext || state.ForeignBelow != want.ForeignBelow {
				t.Errorf("%s: the empty pair's state %+v, want %+v", tc.name, state, want)
			}
		}
	}
}
