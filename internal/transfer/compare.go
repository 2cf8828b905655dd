package transfer

import (
	"cmp"
	"slices"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// windowDiff is what a window of source messages needs, compared with the
// UID map (docs/design.md#the-uid-map-and-sync-state).
type windowDiff struct {
	// keep are the map entries that still hold: their destination message
	// exists. Entries of source messages no longer listed stay too (a
	// source UID is never used again within its UIDVALIDITY).
	keep []syncstate.Mapping
	// updates are flag changes of the source to write to mapped messages.
	updates []flagUpdate
	// candidates are the messages the map lacks that the options let
	// through: copied, or adopted where the destination holds an
	// unmapped copy.
	candidates []message
	skipped    int // left out by the options
	present    int // listed and mapped to a copy that exists
	covered    int // listed source messages the destination must hold
	// unlisted are the entries of keep whose source message was not
	// listed: expunged, most likely (see folderSync.mirror).
	unlisted []syncstate.Mapping
}

// flagUpdate is a change of the flags of one mapped message.
type flagUpdate struct {
	source, destination uint32
	add, remove         []imap.Flag
	want                []imap.Flag
}

// compareWindow compares listed source messages (in UID order) with the
// map entries of their UID range (in source UID order). destExists tells
// whether a destination UID exists; eligible whether the options let a
// message through; wanted which of its flags the destination should have.
// A mapped message whose copy is gone is copied again; an unmapped one
// left out now (flagged \Deleted, say) is not settled, so that it is
// copied once it is let through.
func compareWindow(listing []message, entries []syncstate.Mapping, destExists func(uint32) bool,
	eligible func(message) bool, wanted func([]imap.Flag) []imap.Flag) windowDiff {
	var d windowDiff
	bySource := make(map[uint32]syncstate.Mapping, len(entries))
	for _, e := range entries {
		if destExists(e.Destination) {
			bySource[e.Source] = e
		}
	}
	listed := make(map[uint32]bool, len(listing))
	for _, msg := range listing {
		listed[uint32(msg.UID)] = true
		e, mapped := bySource[uint32(msg.UID)]
		switch {
		case mapped:
			d.covered++
			d.present++
			d.keep = append(d.keep, e)
			if add, remove, want := flagChange(e.Flags, wanted(msg.Flags)); len(add)+len(remove) > 0 {
				d.updates = append(d.updates, flagUpdate{source: e.Source, destination: e.Destination, add: add, remove: remove, want: want})
			}
		case eligible(msg):
			d.covered++
			d.candidates = append(d.candidates, msg)
		default:
			d.skipped++
		}
	}
	for _, e := range entries {
		if _, ok := bySource[e.Source]; ok && !listed[e.Source] {
			d.keep = append(d.keep, e)
			d.unlisted = append(d.unlisted, e)
		}
	}
	sortMappings(d.keep)
	return d
}

// flagChange returns the flags to add and to remove so that a message
// whose flags were last written as written has want (compared without
// case, RFC 9051 §2.3.2), and want as strings for the map.
func flagChange(written []string, want []imap.Flag) (add, remove []imap.Flag, wantFlags []imap.Flag) {
	had := map[imap.Flag]bool{}
	for _, f := range written {
		had[canonicalFlag(imap.Flag(f))] = true
	}
	has := map[imap.Flag]bool{}
	for _, f := range want {
		has[canonicalFlag(f)] = true
		if !had[canonicalFlag(f)] {
			add = append(add, f)
		}
	}
	for _, f := range written {
		if !has[canonicalFlag(imap.Flag(f))] {
			remove = append(remove, imap.Flag(f))
		}
	}
	return add, remove, want
}

func sortMappings(m []syncstate.Mapping) {
	slices.SortFunc(m, func(a, b syncstate.Mapping) int { return cmp.Compare(a.Source, b.Source) })
}

// flagStrings converts flags for the map.
func flagStrings(flags []imap.Flag) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = string(f)
	}
	return out
}

// imapFlags converts flags of the map.
func imapFlags(flags []string) []imap.Flag {
	out := make([]imap.Flag, len(flags))
	for i, f := range flags {
		out[i] = imap.Flag(f)
	}
	return out
}
