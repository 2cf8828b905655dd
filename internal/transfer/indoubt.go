package transfer

import (
	"context"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
)

// inDoubtGrace is how long after an APPEND went unanswered its messages
// are looked for on the destination. A server commits a command it read
// whole even when the connection is gone (Dovecot, a MULTIAPPEND of 50
// messages): usually within milliseconds, possibly after the retry has
// looked and copied them again.
const inDoubtGrace = 10 * time.Minute

// noteInDoubt records messages whose APPEND was sent but never answered.
// Their copies, if the server saved them, have UIDs from the destination's
// UIDNEXT at this folder's SELECT on (RFC 9051 §2.3.1.1: UIDs only grow).
func (fs *folderSync) noteInDoubt(msgs []message) {
	if len(msgs) == 0 {
		return
	}
	st := &fs.state
	from := max(uint32(fs.dst.UIDNext), 1)
	if len(st.InDoubt) == 0 {
		st.InDoubtFrom, st.InDoubtSince = from, time.Now()
	}
	st.InDoubtFrom = min(st.InDoubtFrom, from)
	for _, msg := range msgs {
		st.InDoubt = append(st.InDoubt, uint32(msg.UID))
	}
	slices.Sort(st.InDoubt)
	st.InDoubt = slices.Compact(st.InDoubt)
}

// sweepInDoubt looks for the copies of the messages in doubt among the
// destination's unmapped messages from InDoubtFrom on. A copy of a message
// that was copied again since (and is mapped) is a second copy this engine
// made: it is expunged. A copy of an unmapped message is left for the
// pool to adopt. The others stay in doubt for inDoubtGrace.
func (fs *folderSync) sweepInDoubt(ctx context.Context) error {
	st := &fs.state
	if len(st.InDoubt) == 0 {
		return nil
	}
	extra, err := fs.unmappedCopies(ctx, imap.UID(st.InDoubtFrom))
	if err != nil {
		return err
	}
	left := st.InDoubt
	if !extra.empty() {
		if left, err = fs.dropSecondCopies(ctx, &extra); err != nil {
			return err
		}
	}
	*st = afterSweep(*st, left, time.Now())
	return nil
}

// dropSecondCopies compares the messages in doubt with the destination's
// unmapped copies, expunges the second copies, and returns the messages
// still in doubt.
func (fs *folderSync) dropSecondCopies(ctx context.Context, extra *destinationPool) ([]uint32, error) {
	var uids imap.UIDSet
	for _, uid := range fs.state.InDoubt {
		uids.AddNum(imap.UID(uid))
	}
	sources, _, err := fs.r.source.readableIdentities(uids) // those still on the source and readable
	if err != nil {
		return nil, err
	}
	mapped, err := fs.mappedSources(ctx, fs.state.InDoubt)
	if err != nil {
		return nil, err
	}
	second, left := secondCopies(sources, extra, mapped)
	if len(second) > 0 {
		fs.r.logger.Info("expunging second copies of messages whose APPEND went unanswered", "folder", fs.plan.Destination, "uids", second.String())
		if _, err := fs.expunge(second); err != nil {
			return nil, err
		}
	}
	return left, nil
}

// mappedSources returns which of the source UIDs (ordered) the map holds,
// reading the map in runs of nearby UIDs so that a few scattered UIDs do
// not read a whole folder's map.
func (fs *folderSync) mappedSources(ctx context.Context, uids []uint32) (map[uint32]bool, error) {
	mapped := map[uint32]bool{}
	window := uint32(fs.r.job.Tuning.Window)
	for start := 0; start < len(uids); {
		end := start + 1
		for end < len(uids) && uids[end]-uids[end-1] < window {
			end++
		}
		entries, err := fs.r.sync.mappings(ctx, fs.folder, uids[start], uids[end-1])
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			mapped[e.Source] = true
		}
		start = end
	}
	return mapped, nil
}

// expunge removes destination messages this engine copied, by UID, and
// reports whether it could. Only a destination with UIDPLUS can (RFC 4315
// §2.1): elsewhere EXPUNGE would also remove whatever else the user
// flagged \Deleted, so the messages stay, with a warning.
func (fs *folderSync) expunge(uids imap.UIDSet) (bool, error) {
	r := fs.r
	if caps := r.destination.Caps(); !caps.Has(imap.CapUIDPlus) && !caps.Has(imap.CapIMAP4rev2) {
		r.logger.Warn("the destination cannot expunge by UID (no UIDPLUS); messages left", "folder", fs.plan.Destination, "uids", uids.String())
		return false, nil
	}
	err := r.destination.Store(uids, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close()
	if err == nil {
		err = r.destination.UIDExpunge(uids).Close()
	}
	if err != nil {
		return false, r.destination.Failed(err)
	}
	return true, nil
}
