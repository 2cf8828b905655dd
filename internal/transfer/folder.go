package transfer

import (
	"context"
	"errors"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// copyFolder brings one destination folder up to date with its source
// folder, window by window of source messages, and verifies it by its UID
// map. A folder the servers refuse fails alone (FolderResult.Error); a
// broken connection fails the attempt.
func (r *accountAttempt) copyFolder(ctx context.Context, plan folderPlan) (FolderResult, error) {
	res := FolderResult{Source: plan.Source.Name, Destination: plan.Destination}
	facts := r.folderFacts(plan)
	prev, known := facts.prev, facts.known
	step, empty := decideFolder(facts)
	switch step {
	case leaveUnchanged:
		res.SourceMessages, res.DestinationMessages, res.Unchanged = prev.Covered, prev.Covered, true
		res.AlteredCount, res.Altered = prev.Altered, prev.AlteredExamples
		res.SourceOnly = facts.sourceOnly
		r.figures.found(plan.Source.Name, prev.Covered)
		return res, nil
	case recordEmpty:
		// Nothing to read or write: neither folder is opened.
		r.figures.restart(plan.Source.Name)
		if err := r.prepareDestination(plan); err != nil {
			return res.failed(r.destination, err)
		}
		r.figures.found(plan.Source.Name, 0)
		r.sync.recordEmptied(plan.Source.Name, empty)
		return res, nil
	}
	r.figures.restart(plan.Source.Name)
	// EXAMINE: the source folder is opened read-only (RFC 9051 §6.3.3).
	// CONDSTORE: the folder's HIGHESTMODSEQ, the baseline of the next
	// attempt's CHANGEDSINCE (RFC 7162 §3.1.2.1).
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
func (r *accountAttempt) prepareDestination(plan folderPlan) error {
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
func (r *accountAttempt) createFolder(plan folderPlan) error {
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
