package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// PlansRequest makes new plans of the selected accounts pending and queues
// their jobs on the tests queue, in one transaction. A plan changes no
// account and no task state: it may run beside a pass or a test.
func (s *Store) PlansRequest(ctx context.Context, taskID int64, filter migration.AccountFilter) (int, error) {
	if s.jobsErr != nil {
		return 0, s.jobsErr
	}
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if _, _, err := decide(ctx, q, taskID, migration.CommandPlan); err != nil {
			return err
		}
		rows, err := q.PlansRequest(ctx, dbsqlc.PlansRequestParams(selection(taskID, filter)))
		if err != nil {
			return err
		}
		if n = len(rows); n == 0 {
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

// RecordPlan stores what a plan's job found, with its figures, if its
// plan is still the account's newest.
func (s *Store) RecordPlan(ctx context.Context, outcome migration.PlanOutcome) error {
	params := dbsqlc.PlanRecordParams{AccountID: outcome.AccountID, TaskID: outcome.TaskID, Generation: outcome.Generation,
		State: string(migration.PlanFailed), Error: outcome.Error, QuotaFree: -1}
	if outcome.Plan != nil {
		raw, err := json.Marshal(outcome.Plan)
		if err != nil {
			return err
		}
		f := outcome.Plan.Figures()
		params.State, params.Plan, params.Blocking = string(migration.PlanDone), raw, outcome.Plan.Blocking()
		params.Folders, params.SourceMessages, params.SourceBytes = int32(f.Folders), int64(f.SourceMessages), f.SourceBytes
		params.ToCopyBytes, params.QuotaFree, params.Problems = f.ToCopyBytes, f.QuotaFree, int32(len(f.Problems))
	}
	_, err := s.queries.PlanRecord(ctx, params)
	return err
}

// TaskPlans returns a page of the task's accounts' newest plans in brief,
// and the sums of all, in one snapshot.
func (s *Store) TaskPlans(ctx context.Context, taskID int64, q migration.PlanQuery) ([]migration.AccountPlanRecord, migration.PlanSums, error) {
	var (
		rows []dbsqlc.PlanPageRow
		sums dbsqlc.PlanSumsRow
	)
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		qtx := s.queries.WithTx(tx)
		var err error
		if sums, err = qtx.PlanSums(ctx, taskID); err != nil {
			return err
		}
		params := dbsqlc.PlanPageParams{TaskID: taskID, After: q.After, Filter: string(q.Filter)}
		if q.Limit > 0 {
			params.PageLimit = pgtype.Int4{Int32: int32(q.Limit), Valid: true}
		}
		rows, err = qtx.PlanPage(ctx, params)
		return err
	})
	if err != nil {
		return nil, migration.PlanSums{}, err
	}
	if err := s.emptyOfATask(ctx, taskID, int(sums.Planned)); err != nil {
		return nil, migration.PlanSums{}, err
	}
	out := make([]migration.AccountPlanRecord, len(rows))
	for i, r := range rows {
		out[i] = migration.AccountPlanRecord{AccountID: r.AccountID, SourceLogin: r.SourceLogin, DestinationLogin: r.DestinationLogin,
			State: migration.PlanState(r.State), Blocking: r.Blocking, Error: r.Error,
			RequestedAt: r.RequestedAt.Time, PlannedAt: timePtr(r.PlannedAt),
			Figures: migration.PlanFigures{Folders: int(r.Folders), SourceMessages: int(r.SourceMessages),
				SourceBytes: r.SourceBytes, ToCopyBytes: r.ToCopyBytes, QuotaFree: r.QuotaFree}}
		if err := json.Unmarshal(r.ProblemList, &out[i].Figures.Problems); err != nil {
			return nil, migration.PlanSums{}, fmt.Errorf("account %d's plan: %w", r.AccountID, err)
		}
	}
	return out, migration.PlanSums{Planned: int(sums.Planned), Pending: int(sums.Pending), Done: int(sums.Done), Failed: int(sums.Failed),
		Blocked: int(sums.Blocked), WithProblems: int(sums.WithProblems), SourceBytes: sums.SourceBytes, ToCopyBytes: sums.ToCopyBytes,
		PassesCopied: sums.PassesCopiedBytes, PassesTook: time.Duration(sums.PassesSeconds * float64(time.Second))}, nil
}

// AccountPlan returns the account's newest plan, whole.
func (s *Store) AccountPlan(ctx context.Context, taskID, accountID int64) (migration.AccountPlanRecord, error) {
	r, err := s.queries.PlanOfAccount(ctx, dbsqlc.PlanOfAccountParams{TaskID: taskID, AccountID: accountID})
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := s.AccountGet(ctx, taskID, accountID); err != nil {
			return migration.AccountPlanRecord{}, err
		}
		return migration.AccountPlanRecord{}, migration.ErrNoPlan
	}
	if err != nil {
		return migration.AccountPlanRecord{}, err
	}
	out := migration.AccountPlanRecord{AccountID: r.AccountID, SourceLogin: r.SourceLogin, DestinationLogin: r.DestinationLogin,
		State: migration.PlanState(r.State), Blocking: r.Blocking, Error: r.Error,
		RequestedAt: r.RequestedAt.Time, PlannedAt: timePtr(r.PlannedAt), Figures: migration.PlanFigures{QuotaFree: -1}}
	if r.Plan != nil {
		var plan migration.AccountPlan
		if err := json.Unmarshal(r.Plan, &plan); err != nil {
			return migration.AccountPlanRecord{}, fmt.Errorf("account %d's plan: %w", r.AccountID, err)
		}
		out.Plan, out.Figures = &plan, plan.Figures()
	}
	return out, nil
}
