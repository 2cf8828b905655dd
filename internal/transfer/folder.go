package transfer

import (
	"context"
	"errors"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// copyFolder brings one destination folder up to date with its source
// folder, window by window of source messages, and verifies it by its UID
// map. A folder the servers refuse fails alone (FolderResult.Error); a
// broken connection fails the attempt.
func (r *accountRun) copyFolder(ctx context.Context, plan folderPlan) (FolderResult, error) {
	res := FolderResult{Source: plan.Source.Name, Destination: plan.Destination}
	prev, known := r.states[plan.Source.Name]
	known = known && prev.Servers == r.servers && prev.Destination == plan.Destination && prev.Reads == plan.Source.Reads
	if known && r.unchanged(prev, plan) && !r.job.ReadBackAll {
		res.SourceMessages, res.DestinationMessages, res.Unchanged = prev.Covered, prev.Covered, true
		res.AlteredCount, res.Altered = prev.Altered, prev.AlteredExamples
		res.SourceOnly = r.destination == nil
		r.figures.found(plan.Source.Name, prev.Covered)
		return res, nil
	}
	r.figures.restart(plan.Source.Name)
	if st, ok := r.emptyOnBothSides(prev, known, plan); ok {
		// Nothing to read or write: neither folder is opened.
		if err := r.prepareDestination(plan); err != nil {
			return res.failed(r.destination, err)
		}
		r.figures.found(plan.Source.Name, 0)
		return res, r.resetFolder(ctx, plan.Source.Name, st)
	}
	// EXAMINE: the source folder is opened read-only (RFC 9051 §6.3.3).
	// CONDSTORE: the folder's HIGHESTMODSEQ, the baseline of the next
	// run's CHANGEDSINCE (RFC 7162 §3.1.2.1).
	sd, err := r.source.Select(plan.Source.reads(), &imap.SelectOptions{ReadOnly: true, CondStore: r.source.Caps().Has(imap.CapCondStore)}).Wait()
	if err != nil {
		return res.failed(r.source, err)
	}
	if err := r.prepareDestination(plan); err != nil {
		return res.failed(r.destination, err)
	}
	dd, err := r.destination.Select(plan.Destination, nil).Wait()
	if err != nil {
		return res.failed(r.destination, err)
	}
	fs, err := r.startFolderSync(ctx, plan, prev, known, sd, dd)
	if err != nil {
		return res, err
	}
	if plan.Source.Reads != "" {
		if fs.labels, err = r.labelIndex(ctx, sd); err != nil {
			return res, err
		}
	}
	err = fs.sweepInDoubt(ctx)
	if err == nil {
		err = fs.run(ctx)
	}
	if err == nil && r.job.ReadBackAll {
		err = fs.readBackEarlier(ctx)
	}
	res.Failures, res.SourceMessages, res.DestinationMessages = fs.failures, fs.covered, fs.onDestination
	if saveErr := fs.finish(ctx, err == nil); err == nil {
		err = saveErr
	}
	res.AlteredCount, res.Altered = fs.state.Altered, fs.state.AlteredExamples
	res.DroppedKeywords = fs.newKeywords
	return res, err
}

// emptyOnBothSides returns the state of a folder pair done, when the
// listings (LIST-STATUS) show both folders empty and the destination's
// existing: there is nothing to copy, compare or mirror, and opening them
// would cost each server a SELECT for nothing. A map the folder had is
// void (its messages are gone on both sides) and dropped with the new
// state. A folder with copies in doubt, or one read from Gmail's All
// Mail, takes the usual way.
func (r *accountRun) emptyOnBothSides(prev syncstate.FolderState, known bool, plan folderPlan) (syncstate.FolderState, bool) {
	src, dst := plan.Source.Status, plan.DestStatus
	if r.destination == nil || plan.Create || plan.Source.Reads != "" || (known && len(prev.InDoubt) > 0) ||
		src == nil || dst == nil || src.NumMessages == nil || dst.NumMessages == nil ||
		*src.NumMessages != 0 || *dst.NumMessages != 0 || src.UIDValidity == 0 || dst.UIDValidity == 0 {
		return syncstate.FolderState{}, false
	}
	return syncstate.FolderState{Servers: r.servers, Destination: plan.Destination, Filter: r.job.Options.filterKey(),
		UIDValidity: src.UIDValidity, DestUIDValidity: dst.UIDValidity,
		SourceUIDNext: uint32(src.UIDNext), DestUIDNext: uint32(dst.UIDNext), ForeignBelow: max(uint32(dst.UIDNext), 1),
		SourceHighestModSeq: src.HighestModSeq, Complete: true}, true
}

// unchanged reports whether a folder is as the last run left it, with
// nothing left to do, on both sides (LIST-STATUS): no new or expunged
// message on either side, and no flag changed on the source, which only
// a source with CONDSTORE can tell (RFC 7162 §3.1.2.1, HIGHESTMODSEQ).
func (r *accountRun) unchanged(prev syncstate.FolderState, plan folderPlan) bool {
	if r.destination == nil { // a source-only delta (sourceUnchanged)
		return r.sourceAsLeft(prev, plan.Source.Status)
	}
	dst := plan.DestStatus
	return prev.Reads == plan.Source.Reads && r.sourceAsLeft(prev, plan.Source.Status) && dst != nil &&
		dst.UIDValidity == prev.DestUIDValidity && uint32(dst.UIDNext) == prev.DestUIDNext &&
		dst.NumMessages != nil && *dst.NumMessages == prev.DestMessages
}

// sourceAsLeft reports whether a source folder, as LIST-STATUS shows it
// (src), is as the last run left it complete: no new or expunged
// message, and no flag changed, which only a source with CONDSTORE can
// tell (HIGHESTMODSEQ).
func (r *accountRun) sourceAsLeft(prev syncstate.FolderState, src *imap.StatusData) bool {
	return prev.Complete && prev.Filter == r.job.Options.filterKey() && src != nil &&
		src.HighestModSeq != 0 && src.HighestModSeq == prev.SourceHighestModSeq &&
		src.UIDValidity == prev.UIDValidity && uint32(src.UIDNext) == prev.SourceUIDNext &&
		src.NumMessages != nil && *src.NumMessages == prev.SourceMessages
}

// failed ends a folder the server refused, or passes a connection failure on.
func (res FolderResult) failed(s *session, err error) (FolderResult, error) {
	if !refused(err) {
		return res, s.Failed(err)
	}
	res.Error, res.ErrorSide = s.Fail(imapconn.KindPermanent, err).Error(), s.SideName()
	return res, nil
}

// prepareDestination creates the destination folder where it is missing
// and subscribes it where the source folder is subscribed.
func (r *accountRun) prepareDestination(plan folderPlan) error {
	dst := r.destination
	if plan.Create {
		err := r.createFolder(plan)
		var imapErr *imap.Error
		if err != nil && !(errors.As(err, &imapErr) && imapErr.Code == imap.ResponseCodeAlreadyExists) {
			return err
		}
	}
	if plan.Subscribe {
		if err := dst.Subscribe(plan.Destination).Wait(); err != nil {
			r.logger.Warn("could not subscribe a destination folder", "folder", plan.Destination, "err", err)
		}
	}
	return nil
}

// responseCodeUseAttr is the refusal of a special-use attribute (RFC 6154
// §6); go-imap has no constant for it.
const responseCodeUseAttr imap.ResponseCode = "USEATTR"

// createFolder creates a destination folder, with its source folder's
// role where the destination supports that (RFC 6154 §3) and has no
// folder of the role yet, so that its mail clients find Sent or Trash
// there. A server that refuses the role ([USEATTR]) gets a plain CREATE.
func (r *accountRun) createFolder(plan folderPlan) error {
	dst := r.destination
	if plan.CreateRole == "" || !dst.Caps().Has(imap.CapCreateSpecialUse) {
		return dst.Create(plan.Destination, nil).Wait()
	}
	err := dst.Create(plan.Destination, &imap.CreateOptions{SpecialUse: []imap.MailboxAttr{plan.CreateRole}}).Wait()
	var imapErr *imap.Error
	if errors.As(err, &imapErr) && imapErr.Code == responseCodeUseAttr {
		r.logger.Warn("the destination refused a folder's role; created without it",
			"folder", plan.Destination, "role", plan.CreateRole, "err", err)
		return dst.Create(plan.Destination, nil).Wait()
	}
	return err
}
