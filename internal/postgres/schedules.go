package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// ScheduleSet gives a task its schedule in place of the one it had.
func (s *Store) ScheduleSet(ctx context.Context, taskID int64, sch migration.Schedule) error {
	at := sch.At
	if at == nil {
		at = []string{} // not NULL
	}
	n, err := s.queries.ScheduleSet(ctx, dbsqlc.ScheduleSetParams{
		TaskID: taskID, EveryMinutes: int32(sch.Every / time.Minute), AtTimes: at, TimeZone: sch.TimeZone,
		UntilAt: timestamp(sch.Until), FinalAt: timestamp(sch.FinalAt), NextAt: timestamp(sch.NextPassAt),
	})
	if err == nil && n == 0 {
		err = migration.ErrNotFound
	}
	return err
}

// ScheduleGet returns a task's schedule: ErrNoSchedule without one,
// ErrNotFound without the task.
func (s *Store) ScheduleGet(ctx context.Context, taskID int64) (migration.Schedule, error) {
	row, err := s.queries.ScheduleGet(ctx, taskID)
	if errors.Is(err, pgx.ErrNoRows) {
		return migration.Schedule{}, s.noSchedule(ctx, taskID)
	}
	if err != nil {
		return migration.Schedule{}, err
	}
	return scheduleFromRow(row), nil
}

// ScheduleRemove stops the passes of a task's schedule; which pass was
// the final one stays known.
func (s *Store) ScheduleRemove(ctx context.Context, taskID int64) error {
	dropped, err := s.queries.ScheduleRemove(ctx, taskID)
	if err != nil || dropped > 0 {
		return err
	}
	ended, err := s.queries.ScheduleEnd(ctx, taskID)
	if err == nil && ended == 0 {
		err = s.noSchedule(ctx, taskID)
	}
	return err
}

// noSchedule says why a task has no schedule: ErrNotFound when the task is
// missing, ErrNoSchedule else.
func (s *Store) noSchedule(ctx context.Context, taskID int64) error {
	if _, err := s.TaskState(ctx, taskID); err != nil {
		return err
	}
	return migration.ErrNoSchedule
}

func scheduleFromRow(row dbsqlc.TaskSchedule) migration.Schedule {
	return migration.Schedule{
		Every: time.Duration(row.EveryMinutes) * time.Minute, At: row.AtTimes, TimeZone: row.TimeZone,
		Until: timePtr(row.UntilAt), FinalAt: timePtr(row.FinalAt), NextPassAt: timePtr(row.NextAt),
		FinalPass: int(row.FinalPass),
	}
}

// SchedulesStart starts the passes due at now, each in a savepoint of one
// transaction that holds their schedules: a task whose pass cannot start
// leaves the others' passes started.
func (s *Store) SchedulesStart(ctx context.Context, now time.Time) (int, error) {
	if s.jobsErr != nil {
		return 0, s.jobsErr
	}
	// Most looks find nothing due: they take no lock.
	due, err := s.queries.SchedulesDueExist(ctx, dbsqlc.SchedulesDueExistParams{Now: timestamp(&now), RunningStates: runningStates()})
	if err != nil || !due {
		return 0, err
	}
	started := 0
	err = s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		due, err := q.SchedulesDue(ctx, dbsqlc.SchedulesDueParams{Now: timestamp(&now), RunningStates: runningStates()})
		if err != nil {
			return err
		}
		for _, row := range due {
			ok, err := s.startScheduled(ctx, tx, q, scheduleFromRow(row), row.TaskID, now)
			if err != nil {
				return err
			}
			if ok {
				started++
			}
		}
		return nil
	})
	return started, err
}

// startScheduled starts the pass sch has due at now and moves sch on,
// and says whether a pass started. A task without accounts skips the
// pass, and says so in its log.
func (s *Store) startScheduled(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, sch migration.Schedule, taskID int64, now time.Time) (bool, error) {
	step := sch.Step(now)
	by := migration.StartedBySchedule
	if step == migration.StepFinal {
		by = migration.StartedAsFinal
	}
	if step == migration.StepFinal {
		facts, err := taskFactsLock(ctx, q, taskID, true)
		if err != nil {
			return false, err
		}
		if transition, err := migration.DecideTask(facts, migration.CommandScheduleTick); err == nil && transition.Wait {
			return false, nil // started or paused since it was read
		}
		if refusal := migration.FinalPassRefusal(facts.Accounts, facts.Completed, false); refusal != nil {
			return false, skipFinal(ctx, q, taskID, refusal)
		}
	}
	var pass int32
	savepoint, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	err = startJobsTx(ctx, savepoint, q.WithTx(savepoint), taskID, migration.CommandScheduleTick, func(tx pgx.Tx, q *dbsqlc.Queries) (err error) {
		_, pass, err = s.startPass(ctx, tx, q, taskID, migration.AccountFilter{}, by)
		return err
	}, nil)
	skipped := errors.Is(err, migration.ErrNoAccounts) || errors.Is(err, migration.ErrPlanBlocked) || errors.Is(err, migration.ErrLoginsRefused)
	why := err
	switch {
	case err == nil:
		err = savepoint.Commit(ctx)
	case skipped:
		err = savepoint.Rollback(ctx)
	case errors.Is(err, errPassWaits):
		// Started or paused since it was read: the pass waits.
		return false, savepoint.Rollback(ctx)
	}
	if err != nil {
		return false, err
	}
	if skipped && step == migration.StepFinal {
		return false, skipFinal(ctx, q, taskID, why)
	}
	move := dbsqlc.ScheduleMovedParams{TaskID: taskID, FinalPass: int32(sch.FinalPass)}
	if step == migration.StepFinal {
		move.FinalPass = pass // no delta pass after the final one
	} else {
		move.NextAt = timestamp(sch.NextDelta(*sch.NextPassAt, now))
	}
	if err := q.ScheduleMoved(ctx, move); err != nil {
		return false, err
	}
	if skipped {
		return false, appendEvent(ctx, q, migration.Event{Kind: migration.EventError, TaskID: taskID,
			Message: fmt.Sprintf("the scheduled pass was not started: %v", why)})
	}
	return true, nil
}

// skipFinal gives up a final pass that came due and may not begin: it is
// no longer due, so that it does not start by itself later, once the task
// has changed, and the task's log says why.
func skipFinal(ctx context.Context, q *dbsqlc.Queries, taskID int64, why error) error {
	if err := q.ScheduleFinalDisarm(ctx, taskID); err != nil {
		return err
	}
	return appendEvent(ctx, q, migration.Event{Kind: migration.EventError, TaskID: taskID,
		Message: fmt.Sprintf("the final pass was not started: %v; set its time again (or Final pass now) when the task is ready", why)})
}

// TaskFinalPass makes the task's final pass due at now.
func (s *Store) TaskFinalPass(ctx context.Context, taskID int64, now time.Time, zone *time.Location) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		if _, _, err := decide(ctx, q, taskID, migration.CommandFinal); err != nil {
			return err
		}
		return q.ScheduleFinalNow(ctx, dbsqlc.ScheduleFinalNowParams{TaskID: taskID, TimeZone: zone.String(), Now: timestamp(&now)})
	}))
}

// TaskPausedAt says since when a task is paused; nil when it is not.
func (s *Store) TaskPausedAt(ctx context.Context, taskID int64) (*time.Time, error) {
	paused, err := s.queries.TaskPausedAt(ctx, taskID)
	if err != nil {
		return nil, interpretError(err)
	}
	return timePtr(paused), nil
}

// TaskPause stops new passes of the task, with a task.paused event; with
// hold, the pass under way is held too: its running accounts stop between
// messages and wait queued, and none is admitted, until TaskResume.
func (s *Store) TaskPause(ctx context.Context, taskID int64, hold bool) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		if _, _, err := decide(ctx, q, taskID, migration.CommandPause); err != nil {
			return err
		}
		if err := q.TaskPause(ctx, taskID); err != nil {
			return err
		}
		words := "task paused: no pass starts until it is resumed"
		if hold {
			held, err := q.TaskHold(ctx, dbsqlc.TaskHoldParams{ID: taskID, MigratingStates: texts(migration.MigratingTaskStates)})
			if err != nil {
				return err
			}
			if held > 0 {
				words += "; the pass under way is held: its running accounts stop between messages and go on where they were on resume"
			}
		}
		return appendEvent(ctx, q, migration.Event{Kind: migration.EventTaskPaused, TaskID: taskID, Message: words})
	}))
}

// TaskResume lets the task's passes start again, and a held pass's
// accounts go on, with a task.resumed event.
func (s *Store) TaskResume(ctx context.Context, taskID int64) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		if _, _, err := decide(ctx, q, taskID, migration.CommandResume); err != nil {
			return err
		}
		if err := q.TaskResume(ctx, taskID); err != nil {
			return err
		}
		if err := appendEvent(ctx, q, migration.Event{Kind: migration.EventTaskResumed, TaskID: taskID, Message: "task resumed: passes start again"}); err != nil {
			return err
		}
		return s.admit(ctx, tx, q)
	}))
}

func timestamp(t *time.Time) pgtype.Timestamptz {
	if t == nil {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: *t, Valid: true}
}
