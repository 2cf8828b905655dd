package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// AccountRunStart starts the account of a job when its task and the
// hosts it connects to have room (migration.RunWait otherwise), marking
// the task running with its first account, and logs event. A job that no
// longer holds its account (canceled, or requeued under a newer
// generation) gets migration.RunGone and changes nothing.
func (s *Store) AccountRunStart(ctx context.Context, job migration.AccountRunJob, limits migration.RunLimits) (migration.RunStart, error) {
	start := migration.RunGone
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		// Every change of an account into or out of running holds this
		// lock too, so the counts below stay true until commit.
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		a, err := q.AccountRunLock(ctx, dbsqlc.AccountRunLockParams{TaskID: job.TaskID, ID: job.AccountID})
		if err == pgx.ErrNoRows || (err == nil && (a.State != string(migration.AccountQueued) || a.RunGeneration != job.Generation)) {
			return nil
		}
		if err != nil {
			return err
		}
		if room, err := hasRoom(ctx, q, job.TaskID, a, limits); err != nil || !room {
			start = migration.RunWait
			return err
		}
		start = migration.RunStarted
		if err := q.AccountRunStart(ctx, dbsqlc.AccountRunStartParams{TaskID: job.TaskID, ID: job.AccountID}); err != nil {
			return err
		}
		return q.TaskRunStarted(ctx, job.TaskID)
	})
	if err != nil {
		return migration.RunGone, interpretError(err)
	}
	return start, nil
}

// hasRoom reports whether the account's task runs fewer accounts than its
// parallelism, and each host the account connects to has connections to
// spare.
func hasRoom(ctx context.Context, q *dbsqlc.Queries, taskID int64, a dbsqlc.AccountRunLockRow, limits migration.RunLimits) (bool, error) {
	running, err := q.AccountsRunningByTask(ctx, taskID)
	if err != nil || running >= a.ParallelAccounts {
		return false, err
	}
	if limits.ConnectionsPerHost <= 0 {
		return true, nil
	}
	for _, host := range []string{a.SourceHost, a.DestinationHost} {
		inUse, err := q.HostConnectionsInUse(ctx, dbsqlc.HostConnectionsInUseParams{
			Host: host, SourceConnections: migration.SourceConnections, DestinationConnections: migration.DestinationConnections,
		})
		if err != nil {
			return false, err
		}
		needed := 0
		if a.SourceHost == host {
			needed += migration.SourceConnections
		}
		if a.DestinationHost == host {
			needed += migration.DestinationConnections
		}
		// A run that alone needs more than the limit still runs, alone.
		if inUse > 0 && inUse+int32(needed) > int32(limits.ConnectionsPerHost) {
			return false, nil
		}
	}
	return true, nil
}

// AccountRunRenew renews the lease of a job's running account and returns
// its task's state; migration.ErrLeaseLost when the job no longer holds
// the account.
func (s *Store) AccountRunRenew(ctx context.Context, job migration.AccountRunJob) (migration.TaskState, error) {
	state, err := s.queries.AccountRunRenew(ctx, dbsqlc.AccountRunRenewParams{
		TaskID: job.TaskID, ID: job.AccountID, RunGeneration: job.Generation,
	})
	if err == pgx.ErrNoRows {
		return "", migration.ErrLeaseLost
	}
	return migration.TaskState(state), interpretError(err)
}

// RequeueExpiredRuns finds running accounts whose lease expired (their
// process died) and queues each again under a new generation with a new
// job, so that another process continues where the stored sync state
// says; an account of a task being canceled ends canceled instead. It
// returns how many accounts it handled.
func (s *Store) RequeueExpiredRuns(ctx context.Context, expiry time.Duration) (int, error) {
	if s.jobsErr != nil {
		return 0, s.jobsErr
	}
	handled := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		expired, err := q.AccountsRunExpired(ctx, expiry.Seconds())
		if err != nil {
			return err
		}
		for _, a := range expired {
			if err := s.requeueExpired(ctx, tx, q, a); err != nil {
				return err
			}
		}
		handled = len(expired)
		return nil
	})
	return handled, interpretError(err)
}

func (s *Store) requeueExpired(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, a dbsqlc.AccountsRunExpiredRow) error {
	if a.TaskState == string(migration.TaskCanceling) {
		return finishRun(ctx, q, migration.AccountRunOutcome{
			TaskID: a.TaskID, AccountID: a.ID, Generation: a.RunGeneration,
			State: migration.AccountCanceled, LastError: "canceled",
			Events: []migration.Event{{Kind: migration.EventAccountFailed, TaskID: a.TaskID, AccountID: a.ID,
				Login: a.SourceLogin, Error: "canceled", Message: a.SourceLogin + ": canceled"}},
		})
	}
	queued, err := q.AccountQueue(ctx, dbsqlc.AccountQueueParams{TaskID: a.TaskID, ID: a.ID})
	if err != nil {
		return err
	}
	metadata := []byte(fmt.Sprintf(`{"task_id": %d}`, a.TaskID))
	job := migration.AccountRunJob{TaskID: a.TaskID, AccountID: a.ID, Generation: queued.RunGeneration}
	if _, err := s.jobs.InsertTx(ctx, tx, job, &river.InsertOpts{MaxAttempts: 1, Metadata: metadata}); err != nil {
		return err
	}
	return appendEvent(ctx, q, migration.Event{Kind: migration.EventError, TaskID: a.TaskID, AccountID: a.ID,
		Login: a.SourceLogin, Error: "worker lost",
		Message: a.SourceLogin + ": the process migrating it stopped answering; queued again, it resumes where it stopped"})
}

// TaskCancel asks a queued or running run to stop: accounts not started
// are canceled at once, running ones have their job canceled and end
// canceled when their worker has stopped; the task ends canceled after the
// last. A task that is not running answers ErrTaskNotRunning.
func (s *Store) TaskCancel(ctx context.Context, taskID int64) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil { // before any row lock: see EventsLock
			return err
		}
		if _, err := q.TaskStateLock(ctx, taskID); err != nil {
			return err
		}
		if _, err := q.TaskCancel(ctx, taskID); err != nil {
			if err == pgx.ErrNoRows {
				return migration.ErrTaskNotRunning
			}
			return err
		}
		canceled, err := q.AccountsCancelQueued(ctx, taskID)
		if err != nil {
			return err
		}
		task, err := q.TaskJobsCanceled(ctx, dbsqlc.TaskJobsCanceledParams{ID: taskID, Jobs: int32(canceled)})
		if err != nil {
			return err
		}
		if task.PendingJobs <= 0 {
			return appendEvent(ctx, q, migration.Event{Kind: migration.EventRunCanceled, TaskID: taskID, Message: "run canceled"})
		}
		return s.cancelRunningJobs(ctx, tx, taskID)
	}))
}

// cancelRunningJobs cancels the River jobs migrating accounts of the task
// right now, which cancels their context wherever they run.
func (s *Store) cancelRunningJobs(ctx context.Context, tx pgx.Tx, taskID int64) error {
	params := river.NewJobListParams().
		Kinds(migration.AccountRunJob{}.Kind()).
		States(rivertype.JobStateRunning).
		Metadata(fmt.Sprintf(`{"task_id": %d}`, taskID)).
		First(10000)
	running, err := s.jobs.JobListTx(ctx, tx, params)
	if err != nil {
		return err
	}
	for _, job := range running.Jobs {
		if _, err := s.jobs.JobCancelTx(ctx, tx, job.ID); err != nil {
			return err
		}
	}
	return nil
}

// AccountSyncState returns the copy engine's state of an account, as JSON.
func (s *Store) AccountSyncState(ctx context.Context, taskID, accountID int64) (json.RawMessage, error) {
	state, err := s.queries.AccountSyncStateGet(ctx, dbsqlc.AccountSyncStateGetParams{TaskID: taskID, ID: accountID})
	return state, interpretError(err)
}

// AccountSyncStateSet stores the copy engine's state of an account.
func (s *Store) AccountSyncStateSet(ctx context.Context, taskID, accountID int64, state json.RawMessage) error {
	return interpretError(s.queries.AccountSyncStateSet(ctx, dbsqlc.AccountSyncStateSetParams{TaskID: taskID, ID: accountID, SyncState: state}))
}

// AccountProgressSet stores how far an account's run is.
func (s *Store) AccountProgressSet(ctx context.Context, taskID, accountID int64, p migration.Progress) error {
	return interpretError(progressSet(ctx, s.queries, taskID, accountID, p))
}

// AccountProgressReport stores how far an account's run is and logs event
// (account.progress, folder.done) with it.
func (s *Store) AccountProgressReport(ctx context.Context, taskID, accountID int64, p migration.Progress, event migration.Event) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		if err := progressSet(ctx, q, taskID, accountID, p); err != nil {
			return err
		}
		return appendEvent(ctx, q, event)
	}))
}

// RecordAccountRun stores how an account's run ended, with its events,
// and counts the job done; after the task's last account the task's state
// says how the run went, and a run.finished event says it too. The
// outcome of a job that no longer holds its account is dropped.
func (s *Store) RecordAccountRun(ctx context.Context, outcome migration.AccountRunOutcome) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		return finishRun(ctx, q, outcome)
	}))
}

// finishRun ends an account's run in a transaction that holds EventsLock.
func finishRun(ctx context.Context, q *dbsqlc.Queries, outcome migration.AccountRunOutcome) error {
	n, err := q.AccountRunFinish(ctx, dbsqlc.AccountRunFinishParams{
		TaskID: outcome.TaskID, ID: outcome.AccountID, RunGeneration: outcome.Generation,
		State: string(outcome.State), LastError: outcome.LastError,
	})
	if err != nil || n == 0 {
		return err
	}
	if err := progressSet(ctx, q, outcome.TaskID, outcome.AccountID, outcome.Progress); err != nil {
		return err
	}
	for _, e := range outcome.Events {
		if err := appendEvent(ctx, q, e); err != nil {
			return err
		}
	}
	task, err := q.TaskFinishRunJob(ctx, outcome.TaskID)
	if err != nil || task.PendingJobs > 0 {
		return err
	}
	kind := migration.EventRunFinished
	if task.State == string(migration.TaskCanceled) {
		kind = migration.EventRunCanceled
	}
	return appendEvent(ctx, q, migration.Event{Kind: kind, TaskID: outcome.TaskID, Message: "run finished: " + task.State})
}

func progressSet(ctx context.Context, q *dbsqlc.Queries, taskID, accountID int64, p migration.Progress) error {
	return q.AccountProgressSet(ctx, dbsqlc.AccountProgressSetParams{
		TaskID: taskID, ID: accountID,
		FoldersTotal: p.FoldersTotal, FoldersDone: p.FoldersDone, MessagesTotal: p.MessagesTotal,
		MessagesCopied: p.MessagesCopied, MessagesSkipped: p.MessagesSkipped,
		MessagesFailed: p.MessagesFailed, BytesCopied: p.BytesCopied,
	})
}
