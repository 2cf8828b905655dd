package transfer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// TestCompareWindow: the decision at the heart of "nothing lost, nothing
// twice", without a server. Given a window of the source's listing, the
// UID map's entries for it and which copies still exist, it says what to
// copy, which flags to write, what stays mapped and what was expunged on
// the source. A message is copied when the map lacks it or its copy is
// gone, never when its copy is there; a message the options leave out is
// skipped, not settled.
func TestCompareWindow(t *testing.T) {
	t.Parallel()
	msg := func(uid uint32, flags ...imap.Flag) message { return message{UID: imap.UID(uid), Flags: flags} }
	entry := func(src, dst uint32, flags ...string) syncstate.Mapping {
		return syncstate.Mapping{Source: src, Destination: dst, Flags: flags}
	}
	deleted := func(m message) bool { return !slices.Contains(m.Flags, imap.FlagDeleted) }
	everything := func(message) bool { return true }
	asIs := func(flags []imap.Flag) []imap.Flag { return flags }
	for _, tc := range []struct {
		name     string
		listing  []message
		entries  []syncstate.Mapping
		gone     []uint32 // destination UIDs that no longer exist
		eligible func(message) bool
		// want, in words: the candidates' UIDs, the flag updates, the
		// kept and unlisted entries (source UIDs), and the counts.
		candidates, updates, keep, unlisted string
		skipped, present, covered           int
	}{
		{name: "a first run copies everything", listing: []message{msg(1), msg(2), msg(5)},
			candidates: "1 2 5", covered: 3},
		{name: "a re-run with nothing new copies nothing", listing: []message{msg(1, imap.FlagSeen), msg(2)},
			entries: []syncstate.Mapping{entry(1, 11, `\Seen`), entry(2, 12)},
			keep:    "1 2", present: 2, covered: 2},
		{name: "a new message is copied, the mapped ones are not", listing: []message{msg(1), msg(2), msg(3)},
			entries:    []syncstate.Mapping{entry(1, 11), entry(2, 12)},
			candidates: "3", keep: "1 2", present: 2, covered: 3},
		{name: "a flag gained and a flag lost on the source are written", listing: []message{msg(1, imap.FlagFlagged), msg(2)},
			entries: []syncstate.Mapping{entry(1, 11, `\Seen`), entry(2, 12, `\Answered`)},
			updates: `1→11 +\Flagged -\Seen; 2→12 -\Answered`, keep: "1 2", present: 2, covered: 2},
		// Flags compare without case (RFC 9051 §2.3.2).
		{name: "a flag in another case is no change", listing: []message{msg(1, `\SEEN`, "$Label1")},
			entries: []syncstate.Mapping{entry(1, 11, `\Seen`, "$label1")}, keep: "1", present: 1, covered: 1},
		{name: "a copy deleted on the destination is copied again", listing: []message{msg(1), msg(2)},
			entries:    []syncstate.Mapping{entry(1, 11), entry(2, 12)},
			gone:       []uint32{12},
			candidates: "2", keep: "1", present: 1, covered: 2},
		{name: "a message expunged on the source stays mapped, as unlisted", listing: []message{msg(2)},
			entries: []syncstate.Mapping{entry(1, 11), entry(2, 12)},
			keep:    "1 2", unlisted: "1", present: 1, covered: 1},
		{name: "expunged on both sides, its entry goes", listing: []message{msg(2)},
			entries: []syncstate.Mapping{entry(1, 11), entry(2, 12)}, gone: []uint32{11},
			keep: "2", present: 1, covered: 1},
		// Left out by the options: skipped, not settled, so that it is
		// copied once it is let through.
		{name: "a message left out is skipped", listing: []message{msg(1), msg(2, imap.FlagDeleted)}, eligible: deleted,
			candidates: "1", skipped: 1, covered: 1},
		{name: "a mapped message is kept whatever the options say", listing: []message{msg(1, imap.FlagDeleted)}, eligible: deleted,
			entries: []syncstate.Mapping{entry(1, 11)}, updates: `1→11 +\Deleted`, keep: "1", present: 1, covered: 1},
	} {
		eligible := tc.eligible
		if eligible == nil {
			eligible = everything
		}
		exists := func(uid uint32) bool { return !slices.Contains(tc.gone, uid) }
		d := compareWindow(tc.listing, tc.entries, exists, eligible, asIs)
		got := struct{ candidates, updates, keep, unlisted string }{uidsOf(d.candidates), updatesOf(d.updates), sourcesOf(d.keep), sourcesOf(d.unlisted)}
		want := struct{ candidates, updates, keep, unlisted string }{tc.candidates, tc.updates, tc.keep, tc.unlisted}
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
		if d.skipped != tc.skipped || d.present != tc.present || d.covered != tc.covered {
			t.Errorf("%s: skipped %d, present %d, covered %d; want %d, %d, %d", tc.name, d.skipped, d.present, d.covered, tc.skipped, tc.present, tc.covered)
		}
	}
}

func uidsOf(msgs []message) string {
	words := make([]string, len(msgs))
	for i, m := range msgs {
		words[i] = fmt.Sprint(m.UID)
	}
	return strings.Join(words, " ")
}

func sourcesOf(entries []syncstate.Mapping) string {
	words := make([]string, len(entries))
	for i, e := range entries {
		words[i] = fmt.Sprint(e.Source)
	}
	return strings.Join(words, " ")
}

func updatesOf(updates []flagUpdate) string {
	words := make([]string, len(updates))
	for i, u := range updates {
		w := fmt.Sprintf("%d→%d", u.source, u.destination)
		for _, f := range u.add {
			w += " +" + string(f)
		}
		for _, f := range u.remove {
			w += " -" + string(f)
		}
		words[i] = w
	}
	return strings.Join(words, "; ")
}
