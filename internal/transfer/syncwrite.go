package transfer

import (
	"context"
	"strings"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// writeFlags carries flag changes of the source to mapped destination
// messages, with one UID STORE per distinct change (RFC 9051 §6.4.6):
// flags the source gained are added, flags it lost removed, and what the
// destination changed by itself is left alone. The entries of keep get
// the flags written. A change the destination refuses is tried again by
// the next attempt.
func (fs *folderSync) writeFlags(updates []flagUpdate, keep []syncstate.Mapping) error {
	if len(updates) == 0 {
		return nil
	}
	type change struct {
		flags []imap.Flag
		uids  imap.UIDSet
	}
	changes := map[string]*change{}
	for _, u := range updates {
		for op, flags := range map[string][]imap.Flag{"+": u.add, "-": u.remove} {
			if len(flags) == 0 {
				continue
			}
			key := op + flagKey(flags)
			if changes[key] == nil {
				changes[key] = &change{flags: flags}
			}
			changes[key].uids.AddNum(imap.UID(u.destination))
		}
	}
	refused := map[uint32]bool{}
	for key, c := range changes {
		op := imap.StoreFlagsAdd
		if key[0] == '-' {
			op = imap.StoreFlagsDel
		}
		err := fs.r.destination.Store(c.uids, &imap.StoreFlags{Op: op, Silent: true, Flags: c.flags}, nil).Close()
		switch {
		case err != nil && imapconn.Classify(err) != imapconn.KindPermanent:
			return fs.r.destination.Failed(err)
		case err != nil:
			fs.r.logger.Warn("the destination refused a flag change", "folder", fs.plan.Destination, "err", err)
			fs.flagChangeRefused = true
			uids, _ := c.uids.Nums()
			for _, uid := range uids {
				refused[uint32(uid)] = true
			}
		}
	}
	fs.recordFlags(updates, keep, refused)
	return nil
}

// recordFlags sets the flags written on the entries of keep.
func (fs *folderSync) recordFlags(updates []flagUpdate, keep []syncstate.Mapping, refused map[uint32]bool) {
	index := make(map[uint32]int, len(keep))
	for i, e := range keep {
		index[e.Source] = i
	}
	for _, u := range updates {
		if i, ok := index[u.source]; ok && !refused[u.destination] {
			keep[i].Flags = flagStrings(u.want)
		}
	}
}

// flagKey names a set of flags.
func flagKey(flags []imap.Flag) string {
	parts := make([]string, len(flags))
	for i, f := range flags {
		parts[i] = string(canonicalFlag(f))
	}
	return strings.Join(parts, " ")
}

// copy copies messages to the destination and adds their map entries to
// keep: by the UIDs the destination announces (APPENDUID, RFC 4315), or,
// where it announces none, by identity right after.
func (fs *folderSync) copy(ctx context.Context, keep *[]syncstate.Mapping, messages []message) error {
	if len(messages) == 0 {
		return nil
	}
	r := fs.r
	a, err := r.appenderFor(ctx, fs.plan.Destination, fs.dst.UIDValidity)
	if err != nil {
		return err
	}
	fs.destinationSettled = false // the APPENDs' answers go to the appender
	var unresolved []message
	fc := &folderCopy{m: r, destination: fs.plan.Destination, flags: fs.flags, appender: a,
		bodies: map[imap.UID]*sourceBody{}}
	fc.copied = func(msg message, written []imap.Flag, uid imap.UID) {
		msg.Flags = written
		if uid == 0 {
			unresolved = append(unresolved, msg)
			return
		}
		*keep = append(*keep, syncstate.Mapping{Source: uint32(msg.UID), Destination: uint32(uid), Flags: flagStrings(written)})
		fs.destUIDNext = max(fs.destUIDNext, uid+1)
	}
	err = fc.copyMessages(ctx, messages)
	if err == nil && (!r.job.Options.SkipReadBack || r.job.ReadBackAll) {
		var altered []AlteredCopy
		altered, err = fs.readBack(fc.sent)
		fs.altered = append(fs.altered, altered...)
	}
	if err == nil || !isSourceError(err) { // a source that broke is not asked again
		fs.nameFailures(fc.failures)
	}
	fs.failures = append(fs.failures, fc.failures...)
	fs.noteInDoubt(fc.unsettled())
	if len(unresolved) > 0 && (err == nil || isSourceError(err)) {
		if resolveErr := fs.resolve(keep, unresolved); err == nil {
			err = resolveErr
		}
	}
	return err
}

// resolve finds the destination UIDs of messages appended without
// APPENDUID among the destination's new messages, by identity. One not
// found stays unmapped; the next attempt finds it in the pool.
func (fs *folderSync) resolve(keep *[]syncstate.Mapping, appended []message) error {
	appended, err := fs.sourceIdentities(appended)
	if err != nil {
		return err
	}
	present, err := fs.destinationUIDs(max(fs.destUIDNext, 1))
	if err != nil {
		return err
	}
	var uids imap.UIDSet
	for _, uid := range present {
		uids.AddNum(uid)
		fs.destUIDNext = max(fs.destUIDNext, uid+1)
	}
	var msgs []message
	if len(present) > 0 {
		if msgs, err = fs.r.destination.identities(uids); err != nil {
			return err
		}
	}
	pool := newDestinationPool(msgs)
	copies := pool.match(appended)
	for _, msg := range appended {
		if there, ok := copies[msg.UID]; ok {
			*keep = append(*keep, syncstate.Mapping{Source: uint32(msg.UID), Destination: uint32(there.UID), Flags: flagStrings(msg.Flags)})
		} else {
			fs.unresolved++
		}
	}
	return nil
}
