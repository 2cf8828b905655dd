package transfer

import (
	"context"
	"errors"
	"sort"

	"github.com/emersion/go-imap/v2"
)

// copyFolder brings one destination folder up to date with its source
// folder and verifies the counts. A folder the servers refuse fails alone
// (FolderResult.Error); a broken connection fails the attempt.
func (r *accountRun) copyFolder(ctx context.Context, plan folderPlan) (FolderResult, error) {
	res := FolderResult{Source: plan.Source.Name, Destination: plan.Destination}
	prev, known := r.state[plan.Source.Name]
	known = known && prev.Destination == plan.Destination && prev.Filter == r.job.Options.filterKey()
	if known && unchanged(prev, plan) {
		res.SourceMessages, res.DestinationMessages = prev.Covered, int(*plan.DestStatus.NumMessages)
		return res, nil
	}
	src, dst := r.source, r.destination
	// EXAMINE: the source folder is opened read-only (RFC 9051 §6.3.3).
	sd, err := src.Select(plan.Source.Name, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return res.failed(src, err)
	}
	if err := r.prepareDestination(plan); err != nil {
		return res.failed(dst, err)
	}
	dd, err := dst.Select(plan.Destination, nil).Wait()
	if err != nil {
		return res.failed(dst, err)
	}
	incremental := known && prev.UIDValidity == sd.UIDValidity
	from := imap.UID(1)
	if incremental {
		from = imap.UID(prev.LastUID) + 1
	}
	var fetched []message
	if sd.NumMessages > 0 {
		// Identities are compared only with a destination that holds mail.
		if fetched, err = src.fetchMessages(from, dd.NumMessages > 0); err != nil {
			return res, err
		}
	}
	eligible, filtered := r.job.Options.filter(fetched)
	r.progress.MessagesSkipped += filtered
	dstFrom := imap.UID(1)
	if incremental && prev.DestUIDValidity == dd.UIDValidity && prev.DestUIDNext > 0 {
		dstFrom = imap.UID(prev.DestUIDNext)
	}
	toCopy, err := r.missing(eligible, dd.NumMessages > 0, dstFrom)
	if err != nil {
		return res, err
	}
	r.progress.MessagesTotal += len(toCopy)
	r.report()

	fc := &folderCopy{m: r, destination: plan.Destination, flags: newFlagFilter(dd.PermanentFlags), done: map[imap.UID]bool{}}
	if len(toCopy) > 0 {
		if fc.appender, err = r.multiAppender(ctx); err != nil {
			return res, err
		}
	}
	copyErr := fc.copyMessages(ctx, toCopy)
	res.Failures = fc.failures
	next := FolderState{
		Destination:     plan.Destination,
		Filter:          r.job.Options.filterKey(),
		UIDValidity:     sd.UIDValidity,
		LastUID:         lastSettled(prev.LastUID, incremental, fetched, toCopy, fc.done, fc.failures),
		DestUIDValidity: dd.UIDValidity,
		DestUIDNext:     uint32(dd.UIDNext),
	}
	r.checkpoint(plan.Source.Name, next)
	if copyErr != nil {
		return res, copyErr
	}
	if err := r.verify(&res, fetched); err != nil {
		return res, err
	}
	next.SourceUIDNext, next.SourceMessages = uint32(sd.UIDNext), sd.NumMessages
	next.Covered, next.Complete = res.SourceMessages, len(fc.failures) == 0
	r.checkpoint(plan.Source.Name, next)
	return res, nil
}

// unchanged reports whether a folder is as the last run left it, complete,
// on both sides (LIST-STATUS): then there is nothing to copy, and the
// verified count stands, as long as the destination still holds as many.
func unchanged(prev FolderState, plan folderPlan) bool {
	src, dst := plan.Source.Status, plan.DestStatus
	return prev.Complete && src != nil && dst != nil &&
		src.UIDValidity == prev.UIDValidity && uint32(src.UIDNext) == prev.SourceUIDNext &&
		src.NumMessages != nil && *src.NumMessages == prev.SourceMessages &&
		dst.UIDValidity == prev.DestUIDValidity && dst.NumMessages != nil && int(*dst.NumMessages) >= prev.Covered
}

// failed ends a folder the server refused, or passes a connection failure on.
func (res FolderResult) failed(s *session, err error) (FolderResult, error) {
	if !refused(err) {
		return res, s.side.fail(s.name, classify(err), err)
	}
	res.Error = s.side.fail(s.name, KindPermanent, err).Error()
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

// missing returns the eligible messages whose identity the destination
// folder does not hold as often as the source does. Only destination
// messages from dstFrom on can be the ones this engine added since its
// state was saved, so only those are compared.
func (r *accountRun) missing(eligible []message, destinationHasMail bool, dstFrom imap.UID) ([]message, error) {
	if len(eligible) == 0 || !destinationHasMail {
		return eligible, nil
	}
	present, err := r.destination.fetchMessages(dstFrom, true)
	if err != nil {
		return nil, err
	}
	have := multiset{}
	for _, msg := range present {
		have[msg.Identity]++
	}
	var toCopy []message
	for _, msg := range eligible {
		if have.take(msg.Identity) {
			r.progress.MessagesSkipped++
			continue
		}
		toCopy = append(toCopy, msg)
	}
	return toCopy, nil
}

// lastSettled is the highest source UID up to which every fetched message
// is settled: left out, present already, or copied. A message the
// destination refused, or one not reached, stops it there, so that the
// next run tries again from that message.
func lastSettled(prev uint32, incremental bool, fetched, toCopy []message, copied map[imap.UID]bool, failures []MessageFailure) uint32 {
	last := uint32(0)
	if incremental {
		last = prev
	}
	pending := map[imap.UID]bool{}
	for _, msg := range toCopy {
		if !copied[msg.UID] {
			pending[msg.UID] = true
		}
	}
	for _, f := range failures {
		pending[imap.UID(f.UID)] = true
	}
	sorted := make([]imap.UID, len(fetched))
	for i, msg := range fetched {
		sorted[i] = msg.UID
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for _, uid := range sorted {
		if pending[uid] {
			break
		}
		last = uint32(uid)
	}
	return last
}
