package transfer

import (
	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// The sync core's first decision about a folder pair, made from the
// listings alone before either folder is opened: pure, and table-tested
// without a server (foldercore_test.go).

// folderFacts are what decide a folder pair's step: its last state, its
// plan with both listings (LIST-STATUS), and what the attempt is.
type folderFacts struct {
	prev syncstate.FolderState
	// known: prev is this pair's, of these servers, into this
	// destination, read from the same folder.
	known bool
	plan  folderPlan
	// servers names the attempt's two servers, filter its options' filter
	// (Options.filterKey): a state of others does not hold.
	servers, filter string
	// sourceOnly: the destination is not open, for the source's listing
	// alone found the account unchanged (accountAttempt.sourceUnchanged).
	sourceOnly bool
	// readBackAll reads every copy back, unchanged or not.
	readBackAll bool
}

// folderStep is what a pass does with a folder pair.
type folderStep int

const (
	// openAndCompare opens both folders, compares and copies.
	openAndCompare folderStep = iota
	// leaveUnchanged opens neither: nothing changed since the last attempt
	// brought the pair up to date.
	leaveUnchanged
	// recordEmpty opens neither: both folders are empty, and the state
	// is written from the listings.
	recordEmpty
)

// decideFolder is the step a pass takes with a folder pair, and for
// recordEmpty the pair's new state.
func decideFolder(f folderFacts) (folderStep, syncstate.FolderState) {
	if f.known && f.unchanged() && !f.readBackAll {
		return leaveUnchanged, f.prev
	}
	if st, ok := f.emptyOnBothSides(); ok {
		return recordEmpty, st
	}
	return openAndCompare, syncstate.FolderState{}
}

// unchanged reports whether a folder is as the last attempt left it, with
// nothing left to do, on both sides (LIST-STATUS): no new or expunged
// message on either side, and no flag changed on the source, which only
// a source with CONDSTORE can tell (RFC 7162 §3.1.2.1, HIGHESTMODSEQ). A
// source-only delta has the source's word alone.
func (f folderFacts) unchanged() bool {
	prev, plan := f.prev, f.plan
	if f.sourceOnly {
		return sourceAsLeft(prev, plan.Source.Status, f.filter)
	}
	dst := plan.DestStatus
	return prev.Reads == plan.Source.Reads && sourceAsLeft(prev, plan.Source.Status, f.filter) && dst != nil &&
		dst.UIDValidity == prev.DestUIDValidity && uint32(dst.UIDNext) == prev.DestUIDNext &&
		dst.NumMessages != nil && *dst.NumMessages == prev.DestMessages
}

// sourceAsLeft reports whether a source folder, as LIST-STATUS shows it
// (src), is as the last attempt left it complete under filter: no new or
// expunged message, and no flag changed, which only a source with
// CONDSTORE can tell (HIGHESTMODSEQ).
func sourceAsLeft(prev syncstate.FolderState, src *imap.StatusData, filter string) bool {
	return prev.Complete && prev.Filter == filter && src != nil &&
		src.HighestModSeq != 0 && src.HighestModSeq == prev.SourceHighestModSeq &&
		src.UIDValidity == prev.UIDValidity && uint32(src.UIDNext) == prev.SourceUIDNext &&
		src.NumMessages != nil && *src.NumMessages == prev.SourceMessages
}

// emptyOnBothSides returns the state of a folder pair done, when the
// listings show both folders empty and the destination's existing: there
// is nothing to copy, compare or mirror, and opening them would cost each
// server a SELECT for nothing. A map the folder had is void (its messages
// are gone on both sides) and dropped with the new state. A folder with
// copies in doubt, or one read from Gmail's All Mail, takes the usual way.
func (f folderFacts) emptyOnBothSides() (syncstate.FolderState, bool) {
	src, dst := f.plan.Source.Status, f.plan.DestStatus
	if f.sourceOnly || f.plan.Create || f.plan.Source.Reads != "" || (f.known && len(f.prev.InDoubt) > 0) ||
		src == nil || dst == nil || src.NumMessages == nil || dst.NumMessages == nil ||
		*src.NumMessages != 0 || *dst.NumMessages != 0 || src.UIDValidity == 0 || dst.UIDValidity == 0 {
		return syncstate.FolderState{}, false
	}
	return syncstate.FolderState{Servers: f.servers, Destination: f.plan.Destination, Filter: f.filter,
		UIDValidity: src.UIDValidity, DestUIDValidity: dst.UIDValidity,
		SourceUIDNext: uint32(src.UIDNext), DestUIDNext: uint32(dst.UIDNext), ForeignBelow: max(uint32(dst.UIDNext), 1),
		SourceHighestModSeq: src.HighestModSeq, Complete: true}, true
}

// folderFacts gathers what decides plan's step in this attempt.
func (r *accountAttempt) folderFacts(plan folderPlan) folderFacts {
	prev, known := r.sync.ours(plan.Source.Name)
	known = known && prev.Destination == plan.Destination && prev.Reads == plan.Source.Reads
	return folderFacts{prev: prev, known: known, plan: plan, servers: r.sync.servers, filter: r.sync.filter,
		sourceOnly: r.destination == nil, readBackAll: r.job.ReadBackAll}
}
