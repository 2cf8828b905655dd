package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// PlansRequest makes new plans of the selected accounts pending and queues
// their jobs on the tests queue, in one transaction. A plan changes no
// account and no task state: it may run beside a run or a test.
func (s *Store) PlansRequest(ctx context.Context, taskID int64, filter migration.AccountFilter) (int, error) {
	if s.jobsErr != nil {
		return 0, s.jobsErr
	}
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if _, err := q.TaskStateLock(ctx, taskID); err != nil {
			return err
		}
		rows, err := q.PlansRequest(ctx, dbsqlc.PlansRequestParams(selection(taskID, filter)))
		if err != nil {
			return err
		}
		if n = len(rows); n == 0 {
			total, err := q.AccountCount(ctx, selection(taskID, migration.AccountFilter{}))
			switch {
			case err != nil:
				return err
			case total == 0:
				return migration.ErrNoAccounts
			}
			return migration.ErrNoAccountSelected
		}
		jobs := make([]migration.AccountPlanJob, n)
		for i, r := range rows {
			jobs[i] = migration.AccountPlanJob{TaskID: taskID, AccountID: r.AccountID, Generation: r.Generation}
		}
		return insertTaskJobs(ctx, s, tx, migration.QueueTests, jobs, func(j migration.AccountPlanJob) int64 { return j.TaskID })
	})
	return n, interpretError(err)
}

// RecordPlan stores what a plan's job found, if its plan is still the
// account's newest.
func (s *Store) RecordPlan(ctx context.Context, outcome migration.PlanOutcome) error {
	params := dbsqlc.PlanRecordParams{AccountID: outcome.AccountID, TaskID: outcome.TaskID, Generation: outcome.Generation,
		State: string(migration.PlanFailed), Error: outcome.Error}
	if outcome.Plan != nil {
		raw, err := json.Marshal(outcome.Plan)
		if err != nil {
			return err
		}
		params.State, params.Plan, params.Blocking = string(migration.PlanDone), raw, outcome.Plan.Blocking()
	}
	_, err := s.queries.PlanRecord(ctx, params)
	return err
}

// TaskPlans returns the task's accounts' newest plans.
func (s *Store) TaskPlans(ctx context.Context, taskID int64) ([]migration.AccountPlanRecord, error) {
	rows, err := s.queries.PlanList(ctx, taskID)
	if err != nil {
		return nil, err
	}
	if err := s.emptyOfATask(ctx, taskID, len(rows)); err != nil {
		return nil, err
	}
	out := make([]migration.AccountPlanRecord, len(rows))
	for i, r := range rows {
		out[i] = migration.AccountPlanRecord{AccountID: r.AccountID, SourceLogin: r.SourceLogin, DestinationLogin: r.DestinationLogin,
			State: migration.PlanState(r.State), Blocking: r.Blocking, Error: r.Error,
			RequestedAt: r.RequestedAt.Time, PlannedAt: timePtr(r.PlannedAt)}
		if r.Plan != nil {
			var plan migration.AccountPlan
			if err := json.Unmarshal(r.Plan, &plan); err != nil {
				return nil, fmt.Errorf("account %d's plan: %w", r.AccountID, err)
			}
			out[i].Plan = &plan
		}
	}
	return out, nil
}
