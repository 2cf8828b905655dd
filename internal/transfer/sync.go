package transfer

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// folderSync is one folder pair being brought up to date with its UID map.
type folderSync struct {
	r      *accountAttempt
	plan   folderPlan
	folder string // source folder: the map's key
	src    *imap.SelectData
	dst    *imap.SelectData
	flags  flagFilter
	state  syncstate.FolderState
	pool   destinationPool
	// destUIDNext is the destination's UIDNEXT before this window's
	// appends, as far as this attempt knows: appends without APPENDUID are
	// looked for from there.
	destUIDNext imap.UID
	// unresolved counts appended messages whose destination UID could not
	// be found: they keep ForeignBelow where it is.
	unresolved int
	failures   []syncstate.MessageFailure
	// altered are the copies the read-back found unlike what was sent.
	altered []AlteredCopy
	// readBackUIDs are the copies this try read back after their window.
	readBackUIDs map[imap.UID]bool
	// destinationSettled: the client has read all the destination told of
	// the folder, as a command of its own (the read-back's FETCH) was
	// answered after the last APPEND; finish needs no NOOP then.
	destinationSettled bool
	// Verification: listed source messages the destination must hold, and
	// those it does.
	covered, onDestination int
	// droppedKeywords are the keywords of listed messages that the
	// destination folder cannot keep.
	droppedKeywords map[string]bool
	newKeywords     []string // of droppedKeywords, those no attempt reported before
	// changedSince, when not 0, lists the folder by UID with the flags
	// changed since this modseq only (FolderState.SourceHighestModSeq).
	changedSince uint64
	// flagChangeRefused: a flag change stays to be written, so the next
	// attempt must read every message's flags again.
	flagChangeRefused bool
	// mapStartedEmpty: the folder's map was empty when this try began it
	// (dropped, or never written), so no window has entries to read:
	// windows never share a source UID.
	mapStartedEmpty bool
	// labels, for a Gmail label read from All Mail, says which of its
	// messages are the folder's (runRouted) and their keywords.
	labels *labelIndex
	// twinsUsed are the All Mail messages a Gmail destination's folder
	// got by a label in this try (labelTwins).
	twinsUsed map[imap.UID]bool
}

// stateSaveTimeout bounds writing the state after a canceled attempt: the
// state of what was copied must survive the cancel.
const stateSaveTimeout = 30 * time.Second

// startFolderSync decides whether the folder's map can be used: it was
// written between the same mailboxes and folders, and neither folder's
// UIDVALIDITY changed (a destination folder deleted and created again
// has a new one). Otherwise the map is dropped and the folder is
// reconciled by identity: every destination message is compared.
func (r *accountAttempt) startFolderSync(ctx context.Context, plan folderPlan, prev syncstate.FolderState, known bool, sd, dd *imap.SelectData) (*folderSync, error) {
	fs := &folderSync{r: r, plan: plan, folder: plan.Source.Name, src: sd, dst: dd,
		flags: newFlagFilter(dd.PermanentFlags), destUIDNext: dd.UIDNext, readBackUIDs: map[imap.UID]bool{}}
	usable := known && prev.UIDValidity == sd.UIDValidity && prev.DestUIDValidity == dd.UIDValidity
	sameFilter := prev.Filter == r.sync.filter
	if usable {
		fs.state = prev
		// The flags of the messages the options let through depend on
		// them (\Deleted); a modseq that went back is a server reset.
		if sameFilter && prev.SourceHighestModSeq <= sd.HighestModSeq {
			fs.changedSince = prev.SourceHighestModSeq
		}
	} else {
		if known {
			r.logger.Info("the folder's UID map no longer applies; comparing by identity",
				"folder", fs.folder, "source_uidvalidity", sd.UIDValidity, "destination_uidvalidity", dd.UIDValidity)
		}
		fs.state, fs.mapStartedEmpty = syncstate.FolderState{ForeignBelow: 1}, true
	}
	fs.state.Servers, fs.state.Destination, fs.state.Reads = r.sync.servers, plan.Destination, plan.Source.Reads
	fs.state.UIDValidity, fs.state.DestUIDValidity = sd.UIDValidity, dd.UIDValidity
	fs.state.Complete = false
	switch {
	case !usable:
		return fs, r.sync.reset(ctx, fs.folder, fs.state)
	case sameFilter:
		// The stored state may stay until the folder is done: a pass that
		// stops part-way leaves it behind what the servers now hold
		// (UIDNEXT, counts and modseq only grow apart), which unchanged
		// never takes for done.
		return fs, nil
	default:
		// Other options write other flags: until this pass finishes the
		// folder, its state must not pass for done under the old ones.
		return fs, r.sync.save(ctx, fs.folder, fs.state)
	}
}

// run goes through the source folder in windows of Tuning.Window messages
// (by sequence number), each compared with the map entries of its UID
// range; the last window's range reaches MaxUID. Messages expunged
// meanwhile shift the numbers of those after them, once the server says
// so: the windows follow.
func (fs *folderSync) run(ctx context.Context) error {
	if fs.labels != nil {
		return fs.runRouted(ctx)
	}
	n, window := fs.src.NumMessages, uint32(fs.r.job.Tuning.Window)
	from := uint32(1)
	fs.r.source.TakeExpunges() // of an earlier folder
	for seq := uint32(1); ; seq += window {
		seq, n = followExpunges(seq, n, fs.r.source.TakeExpunges())
		var listing []message
		if seq <= n {
			var err error
			if listing, err = fs.list(seq, min(seq+window-1, n)); err != nil {
				return err
			}
		}
		last := seq+window > n || len(listing) == 0
		to := syncstate.MaxUID
		if !last {
			to = uint32(listing[len(listing)-1].UID)
		}
		if err := fs.window(ctx, from, to, listing); err != nil {
			return err
		}
		if last {
			return nil
		}
		from = to + 1
	}
}

// window brings the source messages with from ≤ UID ≤ to up to date and
// stores their part of the map, whatever happens: what was copied stays
// known even when the copy breaks off.
func (fs *folderSync) window(ctx context.Context, from, to uint32, listing []message) error {
	r := fs.r
	var entries []syncstate.Mapping
	if !fs.mapStartedEmpty {
		var err error
		if entries, err = r.sync.mappings(ctx, fs.folder, from, to); err != nil {
			return err
		}
	}
	existing, err := fs.existing(entries)
	if err != nil {
		return err
	}
	if listing, err = fs.complete(listing, entries, existing); err != nil {
		return err
	}
	fs.addLabelKeywords(listing)
	diff := compareWindow(listing, entries, func(uid uint32) bool { return existing[imap.UID(uid)] },
		func(msg message) bool { return r.job.Options.wantsMessage(msg.Flags, msg.Size, msg.Date) }, fs.wanted)
	fs.noteDroppedKeywords(listing)
	r.figures.skip(fs.folder, diff.skipped)
	r.figures.found(fs.folder, diff.present)
	keep := diff.keep
	err = fs.syncWindow(ctx, &keep, diff)
	fs.covered += diff.covered
	fs.onDestination += countListed(keep, listing)
	sortMappings(keep)
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateSaveTimeout)
	defer cancel()
	if saveErr := r.sync.replaceMappings(saveCtx, fs.folder, from, to, keep); err == nil {
		err = saveErr
	}
	return err
}

// syncWindow writes the window's flag changes, adopts the candidates the
// destination already holds, and copies the rest, adding to keep.
func (fs *folderSync) syncWindow(ctx context.Context, keep *[]syncstate.Mapping, diff windowDiff) error {
	if err := fs.writeFlags(diff.updates, *keep); err != nil {
		return err
	}
	if fs.r.job.Options.MirrorDeletions && len(diff.unlisted) > 0 {
		if err := fs.mirror(keep, diff.unlisted); err != nil {
			return err
		}
	}
	candidates := diff.candidates
	if len(candidates) == 0 {
		return nil
	}
	adopted, rest, err := fs.adopt(ctx, candidates)
	if err != nil {
		return err
	}
	if len(rest) > 0 && fs.r.destinationLabels.allMail != "" {
		var labelled []syncstate.Mapping
		if labelled, rest, err = fs.labelTwins(ctx, rest); err != nil {
			return err
		}
		adopted = append(adopted, labelled...)
	}
	*keep = append(*keep, adopted...)
	fs.r.figures.skip(fs.folder, len(adopted))
	fs.r.figures.plan(fs.folder, len(rest))
	fs.r.report()
	return fs.copy(ctx, keep, rest)
}

// wanted is the flags the destination copy of a message with flags
// should have: what the destination can keep, without \Deleted unless the
// options copy deleted messages (a message deleted on the source after
// its copy is not deleted on the destination by a flag).
func (fs *folderSync) wanted(flags []imap.Flag) []imap.Flag {
	kept := fs.flags.keep(flags)
	if fs.r.job.Options.CopyDeleted {
		return kept
	}
	return slices.DeleteFunc(kept, func(f imap.Flag) bool { return canonicalFlag(f) == canonicalFlag(imap.FlagDeleted) })
}

// existing returns which of the entries' destination UIDs the destination
// folder still holds.
func (fs *folderSync) existing(entries []syncstate.Mapping) (map[imap.UID]bool, error) {
	found := map[imap.UID]bool{}
	if len(entries) == 0 {
		return found, nil
	}
	var uids imap.UIDSet
	for _, e := range entries {
		uids.AddNum(imap.UID(e.Destination))
	}
	present, err := fs.presentAtDestination(uids)
	for _, uid := range present {
		found[uid] = true
	}
	return found, err
}

// presentAtDestination returns which of uids the destination folder
// holds.
func (fs *folderSync) presentAtDestination(uids imap.UIDSet) ([]imap.UID, error) {
	return fs.r.destination.present(uids)
}

// finish records the folder's state as this try leaves it. A folder done
// without error moves ForeignBelow past every destination message: the
// unmapped ones among them were all compared, or arrived while this try
// held the map complete.
func (fs *folderSync) finish(ctx context.Context, done bool) (err error) {
	r := fs.r
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateSaveTimeout)
	defer cancel()
	defer func() {
		// Ended before its state was stored: the map the folder's last
		// window left goes alone, so that what was copied stays known.
		if writeErr := r.sync.writeWaiting(saveCtx); err == nil && writeErr != nil {
			err = fmt.Errorf("storing the sync state: %w", writeErr)
		}
	}()
	if done {
		// Late copies of this try's own unanswered APPENDs have arrived by
		// now, most likely.
		if err := fs.sweepInDoubt(ctx); err != nil {
			return err
		}
	}
	// The copies found altered stay so until a pass that reads back
	// every copy finds them again or not.
	fs.state.NoteAltered(fs.altered, done && r.job.ReadBackAll)
	st := fs.state
	st.Failures = fs.failures
	if done && !fs.destinationSettled {
		// The NOOP's answer comes after everything before it: the
		// APPENDs' EXISTS, and go-imap's own state. go-imap v2 (beta.8)
		// ends a SELECT's Wait before it marks the folder selected, so
		// Mailbox right after a SELECT may still be nil.
		if err := r.destination.Noop().Wait(); err != nil {
			return r.destination.Failed(err)
		}
	}
	if done {
		selected := r.destination.Mailbox()
		if selected == nil {
			// The session ended, or left the folder, after its last
			// command: nothing says what the folder holds.
			return r.destination.Failed(imapconn.ErrSessionEnded)
		}
		st.Filter = r.sync.filter
		st.SourceUIDNext, st.SourceMessages = uint32(fs.src.UIDNext), fs.src.NumMessages
		st.SourceBytes = r.folderCounts[fs.folder].Bytes
		st.DestUIDNext, st.DestMessages = uint32(fs.destUIDNext), selected.NumMessages
		st.Covered = fs.covered
		st.DroppedKeywords = fs.newlyDroppedKeywords()
		st.SourceHighestModSeq = 0
		if !fs.flagChangeRefused {
			st.SourceHighestModSeq = fs.src.HighestModSeq
		}
		st.Complete = len(fs.failures) == 0 && len(st.InDoubt) == 0 && fs.onDestination == fs.covered
		if fs.unresolved == 0 {
			st.ForeignBelow = max(st.ForeignBelow, uint32(fs.destUIDNext))
		}
	}
	return r.sync.save(saveCtx, fs.folder, st)
}

// countListed counts the entries of keep whose source message is listed.
func countListed(keep []syncstate.Mapping, listing []message) int {
	listed := make(map[uint32]bool, len(listing))
	for _, msg := range listing {
		listed[uint32(msg.UID)] = true
	}
	n := 0
	for _, e := range keep {
		if listed[e.Source] {
			n++
		}
	}
	return n
}

// noteDroppedKeywords records the keywords of listing that the destination
// folder cannot keep.
func (fs *folderSync) noteDroppedKeywords(listing []message) {
	for _, msg := range listing {
		for _, kw := range fs.flags.dropped(msg.Flags) {
			if fs.droppedKeywords == nil {
				fs.droppedKeywords = map[string]bool{}
			}
			fs.droppedKeywords[kw] = true
		}
	}
}

// newlyDroppedKeywords returns every keyword dropped so far, for the
// state, and sets the folder's result to those not reported before.
func (fs *folderSync) newlyDroppedKeywords() []string {
	all := slices.Clone(fs.state.DroppedKeywords)
	for kw := range fs.droppedKeywords {
		if !slices.Contains(all, kw) {
			all = append(all, kw)
			fs.newKeywords = append(fs.newKeywords, kw)
		}
	}
	slices.Sort(all)
	slices.Sort(fs.newKeywords)
	return all
}

// followExpunges moves next, a sequence number not listed yet, and n, the
// folder's message count, past EXPUNGE responses (in the order the server
// sent them, each numbered after the ones before): a message expunged
// below next moves it down by one.
func followExpunges(next, n uint32, expunged []uint32) (uint32, uint32) {
	for _, seq := range expunged {
		if seq < next {
			next--
		}
		n = max(n, 1) - 1
	}
	return next, n
}

// list lists the source messages first to last: in full, or by UID with
// the flags changed since the last attempt (changedSince).
func (fs *folderSync) list(first, last uint32) ([]message, error) {
	if fs.changedSince == 0 {
		return fs.r.source.listMessages(first, last)
	}
	return fs.r.source.listChanged(first, last, fs.changedSince)
}

// complete fills in the messages a listing by UID left partial. A mapped
// message whose copy exists has the flags last written to it unless the
// source changed them since, and needs nothing else (the options and the
// figures look at the others); every other one is read in full.
func (fs *folderSync) complete(listing []message, entries []syncstate.Mapping, existing map[imap.UID]bool) ([]message, error) {
	written := make(map[imap.UID][]string, len(entries))
	for _, e := range entries {
		if existing[imap.UID(e.Destination)] {
			written[imap.UID(e.Source)] = e.Flags
		}
	}
	var unknown imap.UIDSet
	for i, msg := range listing {
		flags, mapped := written[msg.UID]
		switch {
		case !msg.partial:
		case mapped && !msg.changed:
			listing[i].Flags, listing[i].partial = imapFlags(flags), false
		case mapped:
			listing[i].partial = false
		default:
			unknown.AddNum(msg.UID)
		}
	}
	if len(unknown) == 0 {
		return listing, nil
	}
	read, err := fs.r.source.readMessages(unknown)
	if err != nil {
		return nil, err
	}
	byUID := make(map[imap.UID]message, len(read))
	for _, msg := range read {
		byUID[msg.UID] = msg
	}
	out := listing[:0]
	for _, msg := range listing {
		if msg.partial {
			full, ok := byUID[msg.UID]
			if !ok {
				continue // expunged meanwhile
			}
			msg = full
		}
		out = append(out, msg)
	}
	return out, nil
}
