package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TaskStartTests moves a task into TaskTesting and queues one connection
// test per account, in one transaction: either the task is testing and
// every job is queued, or nothing changed.
func (s *Store) TaskStartTests(ctx context.Context, taskID int64) error {
	return s.startJobs(ctx, taskID, migration.TaskTesting, func(id int64) river.JobArgs {
		return migration.AccountTestJob{TaskID: taskID, AccountID: id}
	})
}

// TaskStartRun moves a task and its accounts into TaskQueued and queues
// one migration job per account, in one transaction.
func (s *Store) TaskStartRun(ctx context.Context, taskID int64) error {
	return s.startJobs(ctx, taskID, migration.TaskQueued, func(id int64) river.JobArgs {
		return migration.AccountRunJob{TaskID: taskID, AccountID: id}
	})
}

func (s *Store) startJobs(ctx context.Context, taskID int64, state migration.TaskState, job func(accountID int64) river.JobArgs) error {
	// The task's id in the jobs' metadata finds them for a cancel.
	metadata := []byte(fmt.Sprintf(`{"task_id": %d}`, taskID))
	if s.jobsErr != nil {
		return s.jobsErr
	}
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if _, err := q.TaskStateLock(ctx, taskID); err != nil {
			return err
		}
		ids, err := q.AccountIDsByTask(ctx, taskID)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return migration.ErrNoAccounts
		}
		if _, err := q.TaskStartJobs(ctx, dbsqlc.TaskStartJobsParams{
			ID: taskID, State: string(state), Jobs: int32(len(ids)), RunningStates: runningStates(),
		}); err != nil {
			if err == pgx.ErrNoRows {
				return migration.ErrTaskRunning
			}
			return err
		}
		if state == migration.TaskQueued {
			if err := q.AccountsQueue(ctx, taskID); err != nil {
				return err
			}
		}
		jobs := make([]river.InsertManyParams, len(ids))
		for i, id := range ids {
			// One attempt: the engine retries transient failures itself,
			// and a repeated failed login can lock an account out.
			jobs[i] = river.InsertManyParams{Args: job(id), InsertOpts: &river.InsertOpts{MaxAttempts: 1, Metadata: metadata}}
		}
		_, err = s.jobs.InsertManyTx(ctx, tx, jobs)
		return err
	}))
}

// RecordAccountTest stores a test's outcome on the account, appends its
// events and counts the job done, in one transaction; the task's last job
// returns it to the state it had before.
func (s *Store) RecordAccountTest(ctx context.Context, outcome migration.AccountTestOutcome) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		err := q.AccountTestRecord(ctx, dbsqlc.AccountTestRecordParams{
			TaskID: outcome.TaskID, ID: outcome.AccountID,
			SourceOk: boolValue(outcome.SourceError == ""), SourceError: outcome.SourceError,
			DestinationOk: boolValue(outcome.DestinationError == ""), DestinationError: outcome.DestinationError,
		})
		if err != nil {
			return err
		}
		for _, e := range outcome.Events {
			if err := appendEvent(ctx, q, e); err != nil {
				return err
			}
		}
		_, err = q.TaskFinishJob(ctx, outcome.TaskID)
		return err
	}))
}

// EventList returns a page of a task's events after afterSeq, or of every
// task's for taskID 0.
func (s *Store) EventList(ctx context.Context, taskID, afterSeq int64, limit int) ([]migration.Event, error) {
	var rows []dbsqlc.Event
	var err error
	if taskID == 0 {
		rows, err = s.queries.EventListAll(ctx, dbsqlc.EventListAllParams{AfterSeq: afterSeq, MaxRows: int32(limit)})
	} else {
		rows, err = s.queries.EventListByTask(ctx, dbsqlc.EventListByTaskParams{
			TaskID: int8Value(taskID), AfterSeq: afterSeq, MaxRows: int32(limit),
		})
	}
	if err != nil {
		return nil, interpretError(err)
	}
	if len(rows) == 0 && taskID != 0 {
		if _, err := s.TaskState(ctx, taskID); err != nil {
			return nil, err
		}
	}
	events := make([]migration.Event, len(rows))
	for i, row := range rows {
		events[i] = migration.Event{
			Seq: row.Seq, Time: row.Time.Time, Kind: migration.EventKind(row.Kind),
			TaskID: row.TaskID.Int64, AccountID: row.AccountID.Int64, Side: row.Side,
			Login: row.Login, Host: row.Host, Port: int(row.Port), Error: row.Error, Message: row.Message,
		}
	}
	return events, nil
}

// appendEvent adds an event in a transaction that took EventsLock first,
// and wakes the live streams when it commits.
func appendEvent(ctx context.Context, q *dbsqlc.Queries, e migration.Event) error {
	_, err := q.EventAppend(ctx, dbsqlc.EventAppendParams{
		Kind: string(e.Kind), TaskID: int8Value(e.TaskID), AccountID: int8Value(e.AccountID),
		Side: e.Side, Login: e.Login, Host: e.Host, Port: int32(e.Port), Error: e.Error, Message: e.Message,
	})
	if err != nil {
		return err
	}
	return q.EventsNotify(ctx)
}

// EventAppend adds one event on its own.
func (s *Store) EventAppend(ctx context.Context, e migration.Event) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.EventsLock(ctx); err != nil {
			return err
		}
		return appendEvent(ctx, q, e)
	}))
}

func boolValue(b bool) pgtype.Bool { return pgtype.Bool{Bool: b, Valid: true} }

// int8Value maps 0, which no row has as id, to NULL.
func int8Value(id int64) pgtype.Int8 { return pgtype.Int8{Int64: id, Valid: id != 0} }
