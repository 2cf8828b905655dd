package transfer

import (
	"context"
	"fmt"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// An account's sessions: both sides at once, or the source alone first for
// a source-only delta (delta.go), and the destination's APPEND writer when
// a folder first has something to copy.

// open logs in to both sides and lists their folders, at once: a re-run
// with nothing to copy is mostly this. A source-only delta
// (Job.SourceOnlyDelta) opens the source first and leaves the
// destination closed (dst.session nil) when the source's listing shows
// nothing to do.
func (r *accountAttempt) open(ctx context.Context) (src, dst openedSide, err error) {
	if !r.job.SourceOnlyDelta || !r.sync.completedBefore() {
		return openBoth(ctx, r.job)
	}
	src = openSide(ctx, &r.job.Source, "source", r.job.Tuning)
	if src.err != nil {
		return src, dst, src.err
	}
	if r.sourceUnchanged(src) {
		return src, dst, nil
	}
	dst = openSide(ctx, &r.job.Destination, "destination", r.job.Tuning)
	if dst.err != nil {
		src.session.Close()
		return src, dst, dst.err
	}
	return src, dst, nil
}

// readSubscriptions marks the source folders that LSUB lists as
// subscribed, for a source without LIST-EXTENDED. Subscriptions are worth
// a warning, not the account: without them the copy goes on.
func (r *accountAttempt) readSubscriptions(source *session, boxes []mailbox) {
	subscribed, err := imapconn.SubscriptionsByLSUB(source.Session)
	if err != nil {
		r.logger.Warn("could not read the source's subscriptions (LSUB); they are not copied", "err", err)
		return
	}
	for i := range boxes {
		boxes[i].Subscribed = boxes[i].Subscribed || subscribed[boxes[i].Name]
	}
}

// openedSide is a logged-in session and its folders, or why there is none.
type openedSide struct {
	session *session
	boxes   []mailbox
	ns      namespace
	err     error
}

// openBoth logs in to both sides of job and lists their folders, at
// once; either failing closes the other.
func openBoth(ctx context.Context, job *Job) (src, dst openedSide, err error) {
	dstOpened := make(chan openedSide, 1)
	go func() { dstOpened <- openSide(ctx, &job.Destination, "destination", job.Tuning) }()
	src, dst = openSide(ctx, &job.Source, "source", job.Tuning), <-dstOpened
	for _, side := range []openedSide{src, dst} {
		if side.err != nil {
			for _, opened := range []openedSide{src, dst} {
				if opened.session != nil {
					opened.session.Close()
				}
			}
			return src, dst, side.err
		}
	}
	return src, dst, nil
}

func openSide(ctx context.Context, side *imapconn.Side, name string, tuning Tuning) openedSide {
	s, err := connect(ctx, side, name, tuning)
	if err != nil {
		return openedSide{err: err}
	}
	boxes, ns, err := s.listMailboxes()
	return openedSide{session: s, boxes: boxes, ns: ns, err: err}
}

// appenderFor returns the APPEND writer, made the first time a folder has
// something to copy, on the destination session's own connection
// (sharedConn): the destination takes one login. A destination that signs
// in with a token first gets a fresh session in place of the one opened
// at the start: a provider ends a session at its token's expiry (Exchange
// Online does), and the source may have been read for longer than that
// before the first APPEND. The fresh session selects folder again, which
// must be the same folder (uidValidity).
func (r *accountAttempt) appenderFor(ctx context.Context, folder string, uidValidity uint32) (*imapconn.Appender, error) {
	if r.appender != nil {
		return r.appender, nil
	}
	if r.job.Destination.Token != nil {
		fresh, err := connect(ctx, &r.job.Destination, "destination", r.job.Tuning)
		if err != nil {
			return nil, err
		}
		selected, err := fresh.Select(folder, nil).Wait()
		if err == nil && selected.UIDValidity != uidValidity {
			err = fmt.Errorf("the folder %q changed (UIDVALIDITY %d, was %d) while the source was read", folder, selected.UIDValidity, uidValidity)
		}
		if err != nil {
			fresh.Close()
			return nil, fresh.Failed(err)
		}
		r.destination.Close()
		r.destination = fresh
	}
	r.appender = r.destination.Appender(r.job.Tuning.SingleAppend)
	return r.appender, nil
}
