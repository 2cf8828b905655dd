package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// AccountRunStarted marks a queued account running, and its task with the
// first account, and logs it. It reports false, changing nothing, when a
// cancel ended the account before it started.
func (s *Store) AccountRunStarted(ctx context.Context, taskID, accountID int64, event migration.Event) (bool, error) {
	started := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		n, err := q.AccountRunStart(ctx, dbsqlc.AccountRunStartParams{TaskID: taskID, ID: accountID})
		if err != nil || n == 0 {
			return err
		}
		started = true
		if err := q.TaskRunStarted(ctx, taskID); err != nil {
			return err
		}
		return appendEvent(ctx, q, event)
	})
	return started, interpretError(err)
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

// RecordAccountRun stores how an account's run ended, with its events,
// and counts the job done; after the task's last account the task's state
// says how the run went, and a run.finished event says it too.
func (s *Store) RecordAccountRun(ctx context.Context, outcome migration.AccountRunOutcome) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		if err := progressSet(ctx, q, outcome.TaskID, outcome.AccountID, outcome.Progress); err != nil {
			return err
		}
		err := q.AccountRunFinish(ctx, dbsqlc.AccountRunFinishParams{
			TaskID: outcome.TaskID, ID: outcome.AccountID, State: string(outcome.State), LastError: outcome.LastError,
		})
		if err != nil {
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
	}))
}

func progressSet(ctx context.Context, q *dbsqlc.Queries, taskID, accountID int64, p migration.Progress) error {
	return q.AccountProgressSet(ctx, dbsqlc.AccountProgressSetParams{
		TaskID: taskID, ID: accountID,
		FoldersTotal: p.FoldersTotal, FoldersDone: p.FoldersDone, MessagesTotal: p.MessagesTotal,
		MessagesCopied: p.MessagesCopied, MessagesSkipped: p.MessagesSkipped,
		MessagesFailed: p.MessagesFailed, BytesCopied: p.BytesCopied,
	})
}
