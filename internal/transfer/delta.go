package transfer

import (
	"context"
	"slices"
	"strings"
)

// Source-only deltas (Job.SourceOnlyDelta): an account whose source's
// listing shows it as its last complete pass left it ends at the source,
// without a login to the destination (docs/design.md#source-only-deltas).

// sourceUnchanged reports whether the source's listing alone shows that
// the account is as its last complete pass left it: every folder the
// options want has a complete state of these servers and this filter,
// and its LIST-STATUS (with HIGHESTMODSEQ, so that a flag change shows)
// is the one that pass recorded. A Gmail source, whose labels are read
// from All Mail, is always compared on both sides.
func (r *accountAttempt) sourceUnchanged(src openedSide) bool {
	if !sourceModelOf(src.session.Caps(), &r.job.Options).listingShowsUnchanged() {
		return false
	}
	wanted := 0
	for _, b := range src.boxes {
		if !b.Selectable || !r.job.Options.wants(b.Name) {
			continue
		}
		wanted++
		prev, ok := r.sync.ours(b.Name)
		if !ok || prev.Reads != "" || !sourceAsLeft(prev, b.Status, r.sync.filter) {
			return false
		}
		// A folder_map entry changed since: the plan, which needs the
		// destination's namespace, decides where the folder goes.
		if mapped, ok := r.job.Options.FolderMap[b.Name]; ok && mapped != prev.Destination {
			return false
		}
	}
	return wanted > 0
}

// finishUnchanged ends an attempt that the source's listing alone found
// with nothing to do: each folder goes where the last pass put it, and is
// reported unchanged (copyFolder), as by a pass that looked at both sides.
func (r *accountAttempt) finishUnchanged(ctx context.Context, src openedSide) error {
	var plans []folderPlan
	for _, b := range src.boxes {
		if b.Selectable && r.job.Options.wants(b.Name) {
			plans = append(plans, folderPlan{Source: b, Destination: r.sync.states[b.Name].Destination})
		}
	}
	slices.SortFunc(plans, func(a, b folderPlan) int { return strings.Compare(a.Source.Name, b.Source.Name) })
	return r.copyFolders(ctx, plans)
}
