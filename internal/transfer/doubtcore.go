package transfer

import (
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// The sync core's decisions about copies that may be there twice, or no
// longer belong: which destination copies of messages whose APPEND went
// unanswered are second copies, when messages stop being in doubt, and
// which mapped messages the source expunged. Pure, and table-tested
// without a server (doubtcore_test.go); indoubt.go and mirror.go read the
// servers and apply the answers.

// secondCopies judges the messages in doubt that are still readable on
// the source (sources, with their identities) against the destination's
// unmapped copies (extra). A copy of a message that was copied again since
// (mapped) is a second copy this engine made: it is to be expunged. A
// message whose copy is not there yet, or is there but not mapped (the
// next window adopts it), stays in doubt (left). A message in doubt that
// the source no longer has is in neither: there is nothing left to
// compare it with.
func secondCopies(sources []message, extra *destinationPool, mapped map[uint32]bool) (second imap.UIDSet, left []uint32) {
	for _, msg := range sources {
		there, found := extra.take(msg.Identity)
		if found && mapped[uint32(msg.UID)] {
			second.AddNum(there.UID)
		} else {
			left = append(left, uint32(msg.UID))
		}
	}
	return second, left
}

// afterSweep is the folder's state once a sweep left the messages left in
// doubt at now: after inDoubtGrace none is, since a server that saved a
// copy has long shown it; with none, the in-doubt range is forgotten.
func afterSweep(st syncstate.FolderState, left []uint32, now time.Time) syncstate.FolderState {
	if now.Sub(st.InDoubtSince) > inDoubtGrace {
		left = nil
	}
	st.InDoubt = left
	if len(left) == 0 {
		st.InDoubtFrom, st.InDoubtSince = 0, time.Time{}
	}
	return st
}

// goneAtSource returns the entries whose source message is not among
// present (the UIDs the source still has).
func goneAtSource(entries []syncstate.Mapping, present []imap.UID) []syncstate.Mapping {
	has := make(map[uint32]bool, len(present))
	for _, uid := range present {
		has[uint32(uid)] = true
	}
	var gone []syncstate.Mapping
	for _, e := range entries {
		if !has[e.Source] {
			gone = append(gone, e)
		}
	}
	return gone
}

// withoutSources drops from keep the entries of the source messages of
// gone: their copies were expunged with them (Options.MirrorDeletions).
func withoutSources(keep, gone []syncstate.Mapping) []syncstate.Mapping {
	expunged := make(map[uint32]bool, len(gone))
	for _, e := range gone {
		expunged[e.Source] = true
	}
	return slices.DeleteFunc(keep, func(e syncstate.Mapping) bool { return expunged[e.Source] })
}
