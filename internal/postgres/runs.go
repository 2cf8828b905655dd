package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// AccountRunStarted marks an account running, and its task with the first
// account, and logs it.
func (s *Store) AccountRunStarted(ctx context.Context, taskID, accountID int64, event migration.Event) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.TaskRunStarted(ctx, taskID); err != nil {
			return err
		}
		if err := q.AccountRunStart(ctx, dbsqlc.AccountRunStartParams{TaskID: taskID, ID: accountID}); err != nil {
			return err
		}
		return appendEvent(ctx, q, event)
	}))
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
		return appendEvent(ctx, q, migration.Event{
			Kind: migration.EventRunFinished, TaskID: outcome.TaskID,
			Message: "run finished: " + task.State,
		})
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
