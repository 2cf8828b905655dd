package transfer

import (
	"context"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// destinationPool is the destination folder's unmapped messages from
// ForeignBelow on, by identity: copies this engine made and did not get
// to record (a crash, a cut connection, an APPEND without APPENDUID), or
// mail that was there before. A message the map lacks is adopted from the
// pool instead of being copied again; each pool message is adopted once,
// so that two identical messages stay two (a multiset: docs/design.md#identity).
type destinationPool struct {
	loaded     bool
	byIdentity map[string][]message
	byLikeness map[string][]message
	taken      map[imap.UID]bool
}

// newDestinationPool holds msgs, read with their identities.
func newDestinationPool(msgs []message) destinationPool {
	p := destinationPool{loaded: true, byIdentity: map[string][]message{}, byLikeness: map[string][]message{}, taken: map[imap.UID]bool{}}
	for _, msg := range msgs {
		p.byIdentity[msg.Identity] = append(p.byIdentity[msg.Identity], msg)
		p.byLikeness[msg.Likeness] = append(p.byLikeness[msg.Likeness], msg)
	}
	return p
}

// empty reports whether the pool holds nothing to compare.
func (p *destinationPool) empty() bool { return len(p.byIdentity) == 0 }

// take removes and returns a message of identity id.
func (p *destinationPool) take(id string) (message, bool) {
	for _, msg := range p.byIdentity[id] {
		if !p.taken[msg.UID] {
			p.taken[msg.UID] = true
			return msg, true
		}
	}
	return message{}, false
}

// match finds the copies of msgs the pool holds, by source UID: by
// identity first, for every message, then, for those still without one,
// the copy alike (likeness) nearest in size within headerRewriteAllowance,
// a copy whose header the destination re-encoded or refolded. Exact
// matches go first so that a message alike never takes another's exact
// copy. Only adopting uses likeness: a message alike is never expunged as
// a second copy (dropSecondCopies takes by identity alone).
func (p *destinationPool) match(msgs []message) map[imap.UID]message {
	copies := make(map[imap.UID]message, len(msgs))
	for _, msg := range msgs {
		if there, ok := p.take(msg.Identity); ok {
			copies[msg.UID] = there
		}
	}
	for _, msg := range msgs {
		if _, ok := copies[msg.UID]; ok || msg.Likeness == "" {
			continue
		}
		var best message
		found := false
		for _, there := range p.byLikeness[msg.Likeness] {
			d := distance(there.Size, msg.Size)
			if !p.taken[there.UID] && d <= headerRewriteAllowance && (!found || d < distance(best.Size, msg.Size)) {
				best, found = there, true
			}
		}
		if found {
			p.taken[best.UID] = true
			copies[msg.UID] = best
		}
	}
	return copies
}

// distance is how far apart two sizes are.
func distance(a, b int64) int64 { return max(a-b, b-a) }

// adopt splits candidates into map entries for those the destination
// holds unmapped, and the rest, to copy. Candidates are fetched for their
// identity only when the pool has something to compare.
func (fs *folderSync) adopt(ctx context.Context, candidates []message) (adopted []syncstate.Mapping, rest []message, err error) {
	if err := fs.loadPool(ctx); err != nil {
		return nil, nil, err
	}
	if fs.pool.empty() {
		return nil, candidates, nil
	}
	withIdentity, err := fs.sourceIdentities(candidates)
	if err != nil {
		return nil, nil, err
	}
	adopted, updates, rest := adoptions(withIdentity, &fs.pool, fs.wanted)
	if err := fs.writeFlags(updates, adopted); err != nil {
		return nil, nil, err
	}
	return adopted, rest, nil
}

// adoptions decides, for candidates read with their identities, which
// the pool holds a copy of (match). Each of those becomes a map entry
// with the flags its copy has, as written; where they are not the
// source message's (as wanted keeps them), an update makes them so. The
// others are the rest, to copy.
func adoptions(candidates []message, pool *destinationPool, wanted func([]imap.Flag) []imap.Flag) (adopted []syncstate.Mapping, updates []flagUpdate, rest []message) {
	copies := pool.match(candidates)
	for _, msg := range candidates {
		there, ok := copies[msg.UID]
		if !ok {
			rest = append(rest, msg)
			continue
		}
		// The flags it has are the ones written: the source's win below.
		entry := syncstate.Mapping{Source: uint32(msg.UID), Destination: uint32(there.UID), Flags: flagStrings(wanted(there.Flags))}
		adopted = append(adopted, entry)
		if add, remove, want := flagChange(entry.Flags, wanted(msg.Flags)); len(add)+len(remove) > 0 {
			updates = append(updates, flagUpdate{source: entry.Source, destination: entry.Destination, add: add, remove: remove, want: want})
		}
	}
	return adopted, updates, rest
}

// sourceIdentities returns msgs with their identities, read from the
// source where they lack one.
func (fs *folderSync) sourceIdentities(msgs []message) ([]message, error) {
	var uids imap.UIDSet
	for _, msg := range msgs {
		if msg.Identity == "" {
			uids.AddNum(msg.UID)
		}
	}
	if len(uids) == 0 {
		return msgs, nil
	}
	read, partial, err := fs.r.source.readableIdentities(uids)
	if err != nil {
		return nil, err
	}
	byUID := make(map[imap.UID]message, len(read))
	for _, m := range read {
		byUID[m.UID] = m
	}
	out := make([]message, 0, len(msgs))
	for _, msg := range msgs {
		if msg.Identity == "" {
			msg.Identity, msg.Likeness = byUID[msg.UID].Identity, byUID[msg.UID].Likeness
		}
		// A message the source did not deliver was expunged meanwhile,
		// and is not copied; unless the source refused to read some: its
		// copy then fails and is recorded (folderCopy.unreadable).
		if msg.Identity != "" || partial {
			out = append(out, msg)
		}
	}
	return out, nil
}

// loadPool reads, once per folder and attempt, the identities of the
// destination's unmapped messages from ForeignBelow on. Usually there are
// none, and it costs one UID SEARCH; none at all when the folder was
// empty when selected (the first copy): there is nothing to adopt then,
// and the copies of APPENDs that a server commits late are the sweep's
// (sweepInDoubt).
func (fs *folderSync) loadPool(ctx context.Context) error {
	if fs.pool.loaded {
		return nil
	}
	if fs.dst.NumMessages == 0 {
		fs.pool = newDestinationPool(nil)
		return nil
	}
	pool, err := fs.unmappedCopies(ctx, imap.UID(max(fs.state.ForeignBelow, 1)))
	fs.pool = pool
	return err
}

// unmappedCopies returns the destination folder's messages from UID from
// on that the map lacks, by identity.
func (fs *folderSync) unmappedCopies(ctx context.Context, from imap.UID) (destinationPool, error) {
	pool := newDestinationPool(nil)
	present, err := fs.destinationUIDs(from)
	if err != nil || len(present) == 0 {
		return pool, err
	}
	mapped, err := fs.r.sync.mappedDestinations(ctx, fs.folder, uint32(from))
	if err != nil {
		return pool, err
	}
	isMapped := make(map[imap.UID]bool, len(mapped))
	for _, uid := range mapped {
		isMapped[imap.UID(uid)] = true
	}
	var unmapped imap.UIDSet
	for _, uid := range present {
		if !isMapped[uid] {
			unmapped.AddNum(uid)
		}
	}
	if len(unmapped) == 0 {
		return pool, nil
	}
	msgs, err := fs.r.destination.identities(unmapped)
	if err != nil {
		return pool, err
	}
	return newDestinationPool(msgs), nil
}

// destinationUIDs returns the destination folder's UIDs from from on.
func (fs *folderSync) destinationUIDs(from imap.UID) ([]imap.UID, error) {
	var uids imap.UIDSet
	uids.AddRange(from, 0) // from:*
	present, err := fs.presentAtDestination(uids)
	if err != nil {
		return nil, err
	}
	var out []imap.UID
	for _, uid := range present {
		// "from:*" names the last message even when its UID is below from
		// (RFC 9051 §6.4.8): drop it.
		if uid >= from {
			out = append(out, uid)
		}
	}
	return out, nil
}
