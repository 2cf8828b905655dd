package worker

import (
	"context"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// progressReporter stores an account's progress at most once a second and
// logs it as an account.progress event at most once per
// Options.ProgressEvents (docs/design.md#throttling-of-progress-events: per
// account), and logs each folder that is done, unless it is only unchanged
// (migration.FolderEnd.Summarized): with the next progress stored, or with
// the attempt's outcome. A small account's folders then cost
// one transaction, not one each.
type progressReporter struct {
	worker               *AccountAttempt
	parties              migration.AttemptParties // name the attempt in its events
	ctx                  context.Context          // the job's: progress of a canceled attempt is dropped
	lastStored, lastSent time.Time
	counted              transfer.Progress // what the metrics have of this attempt
	// before are the figures of the earlier attempts of the pass this
	// attempt resumes: zero for the pass's first attempt.
	before migration.Progress
	// pending are the folder.done events not logged yet.
	pending []migration.Event
}

// throttled logs a server's request to slow down, with the figures so
// far, and counts it.
func (r *progressReporter) throttled(th transfer.Throttle) {
	r.worker.opts.Metrics.IMAPError(th.Side, imapconn.KindThrottled.Name())
	figures := r.pass(r.counted)
	event := r.parties.ThrottledEvent(th.Side, th.Words, th.Until, th.Budget, figures)
	if err := r.worker.store.AccountThrottled(r.ctx, r.parties.TaskID, r.parties.AccountID, figures, th.Until, event); err != nil && r.ctx.Err() == nil {
		r.worker.logger.Warn("could not log a throttle", "account", r.parties.AccountID, "err", err)
	}
}

// pass returns the figures of the whole pass: what earlier attempts
// copied counts as copied (this attempt finds it on the destination, and
// would count it as already there), what they planned and copied as
// planned.
// Refusals are counted again, since each attempt tries them again.
func (r *progressReporter) pass(p transfer.Progress) migration.Progress {
	figures := p.Figures
	copiedBefore := r.before.MessagesCopied
	figures.MessagesTotal += copiedBefore
	figures.MessagesCopied += copiedBefore
	figures.BytesCopied += r.before.BytesCopied
	figures.MessagesSkipped = max(0, figures.MessagesSkipped-copiedBefore)
	return figures
}

// count adds what was copied since the last call to the metrics.
func (r *progressReporter) count(p transfer.Progress) {
	r.worker.opts.Metrics.Copied(p.MessagesCopied-r.counted.MessagesCopied, p.BytesCopied-r.counted.BytesCopied)
	r.worker.opts.Metrics.Refused(p.MessagesFailed - r.counted.MessagesFailed)
	r.counted = p
}

func (r *progressReporter) progress(p transfer.Progress) {
	r.count(p)
	if time.Since(r.lastStored) < r.storeInterval() {
		return
	}
	r.store(p)
}

func (r *progressReporter) storeInterval() time.Duration {
	return min(progressInterval, r.worker.opts.ProgressEvents)
}

// store stores the figures p with the folders done since the last time,
// and an account.progress event when one is due.
func (r *progressReporter) store(p transfer.Progress) {
	now := time.Now()
	r.lastStored = now
	figures := r.pass(p)
	events := r.pending
	r.pending = nil
	if now.Sub(r.lastSent) >= r.worker.opts.ProgressEvents {
		r.lastSent = now
		events = append(events, r.parties.ProgressEvent(figures, p.Folder))
	}
	taskID, accountID := r.parties.TaskID, r.parties.AccountID
	var err error
	if len(events) == 0 {
		err = r.worker.store.AccountProgressSet(r.ctx, taskID, accountID, figures)
	} else {
		err = r.worker.store.AccountProgressReport(r.ctx, taskID, accountID, figures, events...)
	}
	if err != nil && r.ctx.Err() == nil {
		r.worker.logger.Warn("could not store progress", "account", accountID, "err", err)
	}
}

// folderDone holds the folder.done event of f, unless f has nothing to
// tell but that it is unchanged: the attempt's end counts those.
func (r *progressReporter) folderDone(f transfer.FolderResult, p transfer.Progress) {
	if end := folderEndOf(f); !end.Summarized() {
		r.pending = append(r.pending, r.parties.FolderDoneEvent(end, r.pass(p)))
	}
	if time.Since(r.lastStored) >= r.storeInterval() {
		r.store(p)
	}
}
