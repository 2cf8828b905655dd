package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/persist"
	"github.com/mailmigrate/mailmigrate/internal/sides"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// AttemptStore is what the migration worker needs of storage.
type AttemptStore interface {
	Store
	// SyncState is where the copy engine keeps an account's sync state.
	SyncState(accountID int64) syncstate.StateStore
	// Traffic counts what each mailbox moved, for the daily byte budgets.
	Traffic() provider.TrafficLedger
	AccountProgressSet(ctx context.Context, taskID, accountID int64, p migration.Progress) error
	AccountProgressReport(ctx context.Context, taskID, accountID int64, p migration.Progress, events ...migration.Event) error
	// AccountThrottled stores that a server throttled the account's attempt,
	// which pauses until until, with its figures and event.
	AccountThrottled(ctx context.Context, taskID, accountID int64, p migration.Progress, until time.Time, event migration.Event) error
}

// progressInterval spaces the progress an account's attempt stores.
const progressInterval = time.Second

// startRetry is how long a job whose start failed (the database is away)
// waits before it tries again.
const startRetry = 2 * time.Second

// AccountAttempt migrates one account with the copy engine, keeping its sync
// state and progress in the store as it goes.
type AccountAttempt struct {
	river.WorkerDefaults[migration.AttemptJob]
	store     AttemptStore
	lifecycle Lifecycle
	logger    *slog.Logger
	opts      Options
	logins    *sides.Logins
}

// Timeout lets a large mailbox take as long as it takes.
func (w *AccountAttempt) Timeout(*river.Job[migration.AttemptJob]) time.Duration { return -1 }

// Work migrates the account, which admission gave room. It first starts
// the account: a cancel may have ended it, or a newer job may hold it
// (nothing to do then). From then on, whatever goes wrong ends up in the
// outcome, so that the attempt always finishes.
func (w *AccountAttempt) Work(ctx context.Context, job *river.Job[migration.AttemptJob]) error {
	args := job.Args
	started, ok, err := w.lifecycle.StartAttempt(ctx, args)
	switch {
	case err != nil:
		// The account is still admitted: failing the job would strand it.
		w.logger.Warn("could not start an account; trying again", "account", args.AccountID, "err", err)
		return river.JobSnooze(startRetry)
	case !ok:
		return nil
	}
	ctx, release := w.holdLease(ctx, args)
	defer release()
	outcome := w.run(ctx, args, started)
	outcome.Generation = args.Generation
	// Should this fail too, the lease expires and the account resumes.
	return persist.Outcome(ctx, w.logger, func(ctx context.Context) error { return w.lifecycle.EndAttempt(ctx, outcome) })
}

// run prepares and migrates a started account: the attempt's work.
func (w *AccountAttempt) run(ctx context.Context, args migration.AttemptJob, started migration.StartedAttempt) migration.AttemptOutcome {
	if started.CredentialsErr != nil {
		return started.NotStartedOutcome(started.CredentialsErr)
	}
	engineJob, creds := w.prepare(args, started)
	// A new attempt after a retry or a takeover carries on from the figures of
	// the attempts before it in the pass; a first attempt's are zero.
	return w.migrate(ctx, args, engineJob, creds, started)
}

// holdLease renews the account's lease while the job works, and cancels
// the returned context when the task or the account is being canceled,
// or the lease was lost (the job was taken for dead and replaced).
func (w *AccountAttempt) holdLease(ctx context.Context, args migration.AttemptJob) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		ticker := time.NewTicker(w.opts.LeaseRenewal)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
			}
			stop, err := w.lifecycle.RenewAttempt(ctx, args)
			switch {
			case errors.Is(err, migration.ErrLeaseLost):
				w.logger.Warn("lease lost: another job holds the account now", "account", args.AccountID)
				cancel(err)
				return
			case err != nil:
				w.logger.Warn("could not renew an account's lease", "account", args.AccountID, "err", err)
			case stop:
				cancel(context.Canceled)
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

func (w *AccountAttempt) migrate(ctx context.Context, args migration.AttemptJob, job transfer.Job, creds migration.Credentials, started migration.StartedAttempt) migration.AttemptOutcome {
	before := started.Account.Progress
	parties := migration.AttemptParties{TaskID: args.TaskID, AccountID: args.AccountID,
		Source: migration.Party{Side: "source", Login: creds.SourceLogin, Host: job.Source.Host, Port: job.Source.Port,
			Shared: started.Source.Auth.SharedCredential()},
		Destination: migration.Party{Side: "destination", Login: creds.DestinationLogin, Host: job.Destination.Host, Port: job.Destination.Port,
			Shared: started.Destination.Auth.SharedCredential()}}
	// The first figures are stored after a second of work, like the next
	// ones: an account done sooner stores them once, with its outcome.
	reporter := &progressReporter{worker: w, parties: parties, ctx: ctx, before: before, lastStored: time.Now()}
	job.OnProgress = reporter.progress
	job.OnFolderDone = reporter.folderDone
	job.OnThrottled = reporter.throttled
	res, err := transfer.Migrate(ctx, job)
	reporter.count(res.Progress)
	end := migration.AttemptEnd{Progress: reporter.pass(res.Progress), Err: err, Transient: imapconn.KindOf(err).Retryable()}
	var imapErr *imapconn.Error
	if errors.As(err, &imapErr) {
		end.Blamed = &migration.Party{Side: imapErr.Side, Login: imapErr.Login, Host: imapErr.Host, Port: imapErr.Port,
			Shared: parties.Side(imapErr.Side).Shared}
		end.Kind, end.Problem = migration.FailureKind(imapErr.Kind.Name()), migration.ServerProblem(transfer.ConfigProblem(err))
		if imapconn.TokenRefused(err) {
			end.Kind = migration.FailureToken
		}
	}
	var paused *transfer.PausedError
	if errors.As(err, &paused) {
		end.Paused = &migration.Pause{Side: paused.Side, Words: paused.Words, Until: paused.Until, Budget: paused.Budget}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		side := "source"
		if end.Blamed != nil {
			side = end.Blamed.Side
		}
		w.opts.Metrics.IMAPError(side, imapconn.KindOf(err).Name())
	}
	for _, f := range res.Folders {
		end.Folders = append(end.Folders, folderEndOf(f))
	}
	end.Scripts = scriptsEndOf(res.Scripts)
	outcome := parties.Outcome(end, w.opts.RetryDelays)
	outcome.Pending = reporter.pending
	scrubAttemptOutcome(&outcome, knownSecrets(job.Source, job.Destination))
	w.countRefusedLogin(ctx, outcome.LoginRefused, job)
	return outcome
}

// countRefusedLogin counts an attempt's refused login against its host's
// failed-login limit, which login tests keep to.
func (w *AccountAttempt) countRefusedLogin(ctx context.Context, side string, job transfer.Job) {
	host := job.Source.Host
	switch side {
	case "":
		return
	case "destination":
		host = job.Destination.Host
	}
	if err := w.store.LoginFailureRecord(context.WithoutCancel(ctx), host); err != nil {
		w.logger.Warn("could not count a failed login", "host", host, "err", err)
	}
}

// folderEndOf turns the engine's result for a folder into the domain's.
func folderEndOf(f transfer.FolderResult) migration.FolderEnd {
	end := migration.FolderEnd{Source: f.Source, Destination: f.Destination,
		SourceMessages: f.SourceMessages, DestinationMessages: f.DestinationMessages, Unchanged: f.Unchanged, SourceOnly: f.SourceOnly,
		Error: f.Error, ErrorSide: f.ErrorSide, DroppedKeywords: f.DroppedKeywords}
	end.Altered = f.AlteredCount
	for _, a := range f.Altered {
		end.AlteredExamples = append(end.AlteredExamples, migration.AlteredCopy{SourceUID: a.SourceUID,
			DestinationUID: a.DestinationUID, Subject: a.Subject, What: a.What})
	}
	for _, r := range f.Failures {
		end.Refusals = append(end.Refusals, migration.Refusal{UID: r.UID, Side: r.Side, Reason: r.Reason, Subject: r.Subject, Date: r.Date, Size: r.Size})
	}
	return end
}

// scriptsEndOf turns the engine's result for the Sieve scripts into the
// domain's; nil when they were not moved.
func scriptsEndOf(s *transfer.ScriptsResult) *migration.ScriptsEnd {
	if s == nil {
		return nil
	}
	end := &migration.ScriptsEnd{Copied: s.Copied, Unchanged: s.Unchanged, Active: s.Active, Error: s.Error}
	for _, r := range s.Renamed {
		end.Renamed = append(end.Renamed, migration.ScriptRename{Script: r.Script, From: r.From, To: r.To})
	}
	for _, r := range s.Refused {
		end.Refused = append(end.Refused, migration.ScriptProblem{Script: r.Script, Reason: r.Reason})
	}
	for _, r := range s.Unread {
		end.Unread = append(end.Unread, migration.ScriptProblem{Script: r.Script, Reason: r.Reason})
	}
	for _, r := range s.Kept {
		end.Kept = append(end.Kept, migration.ScriptProblem{Script: r.Script, Reason: r.Reason})
	}
	return end
}

// prepare builds the engine's job for a started account: servers,
// credentials, the task's options and the stored sync state.
func (w *AccountAttempt) prepare(args migration.AttemptJob, started migration.StartedAttempt) (transfer.Job, migration.Credentials) {
	creds := started.Credentials
	src, dst := w.logins.Sides(args.TaskID, args.AccountID, started.Source, started.Destination, creds)
	return transfer.Job{
		Source:      src,
		Destination: dst,
		Options:     optionsOf(started.Task.Options), State: w.store.SyncState(args.AccountID), Traffic: w.store.Traffic(),
		SourceOnlyDelta: !started.Verifying, ReadBackAll: started.Verifying,
		Logger: scrubbedLogger(w.logger, knownSecrets(src, dst)), Tuning: w.opts.Tuning}, creds
}

// optionsOf turns a task's options into the engine's.
func optionsOf(o migration.TaskOptions) transfer.Options {
	return transfer.Options{IncludeFolders: o.IncludeFolders, ExcludeFolders: o.ExcludeFolders, FolderMap: o.FolderMap,
		MaxMessageBytes: o.MaxMessageBytes, Since: o.Since, MirrorDeletions: o.MirrorDeletions,
		GmailLabels: transfer.GmailLabels(o.GmailLabels), SkipReadBack: o.VerifyCopies == migration.VerifyCounts,
		ReadBackBodies: o.VerifyCopies == migration.VerifyFull}
}
