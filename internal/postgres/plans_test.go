package postgres_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestPlanFiguresOfOlderPlans: migration 0031 gives the plans recorded
// before it the figures RecordPlan gives a plan now, so that their sums
// and listings stay right after an upgrade.
func TestPlanFiguresOfOlderPlans(t *testing.T) {
	store, pool, _ := newStore(t)
	ctx := context.Background()
	task := addTask(t, store)
	if _, err := migration.NewService(store).ImportAccounts(ctx, task, []byte("new,pw\nolder,pw\nfailed,pw\n")); err != nil {
		t.Fatal(err)
	}
	plan := migration.AccountPlan{SourceMessages: 12, SourceBytes: 3_000, ToCopyBytes: 1_000, QuotaFree: 50_000,
		Folders:  []migration.PlannedFolder{{Source: "INBOX"}, {Source: "Sent"}},
		Problems: []migration.PlanProblem{{Kind: "collision", Blocking: true, Words: "Q1.2024 would become Q1_2024"}}}
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO account_plans (account_id, task_id) SELECT id, task_id FROM accounts WHERE task_id = $1`, task); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	rows, err := pool.Query(ctx, "SELECT source_login, id FROM accounts WHERE task_id = $1", task)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var login string
		var id int64
		if err := rows.Scan(&login, &id); err != nil {
			t.Fatal(err)
		}
		ids[login] = id
	}
	// "new" is recorded as the service records a plan now; "older" as
	// before migration 0031 (its JSON alone), then given the migration's
	// backfill; "failed" could not be planned.
	if err := store.RecordPlan(ctx, migration.PlanOutcome{TaskID: task, AccountID: ids["new"], Generation: 1, Plan: &plan}); err != nil {
		t.Fatal(err)
	}
	if err := store.RecordPlan(ctx, migration.PlanOutcome{TaskID: task, AccountID: ids["failed"], Generation: 1, Error: "login refused"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE account_plans SET state = 'done', blocking = true, plan = $2, planned_at = now() WHERE account_id = $1`,
		ids["older"], raw); err != nil {
		t.Fatal(err)
	}
	migrationText, err := os.ReadFile("../../sql/migrations/0031_plan_figures.sql")
	if err != nil {
		t.Fatal(err)
	}
	text := string(migrationText)
	backfill := text[strings.Index(text, "UPDATE account_plans"):]
	backfill = backfill[:strings.Index(backfill, ";")]
	if _, err := pool.Exec(ctx, backfill+" AND account_id = $1", ids["older"]); err != nil {
		t.Fatal(err)
	}

	listed, sums, err := store.TaskPlans(ctx, task, migration.PlanQuery{Filter: migration.PlanFilterAll})
	if err != nil {
		t.Fatal(err)
	}
	byLogin := map[string]migration.AccountPlanRecord{}
	for _, r := range listed {
		byLogin[r.SourceLogin] = r
	}
	want := plan.Figures()
	for _, login := range []string{"new", "older"} {
		got := byLogin[login].Figures
		if got.Folders != want.Folders || got.SourceMessages != want.SourceMessages || got.SourceBytes != want.SourceBytes ||
			got.ToCopyBytes != want.ToCopyBytes || got.QuotaFree != want.QuotaFree || len(got.Problems) != 1 || got.Problems[0] != want.Problems[0] {
			t.Errorf("%s's figures %+v, want %+v", login, got, want)
		}
	}
	if f := byLogin["failed"].Figures; f.QuotaFree != -1 || f.SourceBytes != 0 || len(f.Problems) != 0 {
		t.Errorf("the failed plan's figures: %+v", f)
	}
	if sums != (migration.PlanSums{Planned: 3, Done: 2, Failed: 1, Blocked: 2, WithProblems: 3, SourceBytes: 6_000, ToCopyBytes: 2_000}) {
		t.Errorf("sums %+v", sums)
	}
	for filter, want := range map[migration.PlanFilter]int{migration.PlanFilterProblems: 3, migration.PlanFilterBlocking: 2,
		migration.PlanFilterFailed: 1, migration.PlanFilterPending: 0} {
		page, _, err := store.TaskPlans(ctx, task, migration.PlanQuery{Filter: filter, Limit: 10})
		if err != nil || len(page) != want || sums.Listed(filter) != want {
			t.Errorf("filter %s: %d listed, %d counted, want %d (%v)", filter, len(page), sums.Listed(filter), want, err)
		}
	}
	if page, _, err := store.TaskPlans(ctx, task, migration.PlanQuery{Filter: migration.PlanFilterAll, After: ids["new"], Limit: 1}); err != nil ||
		len(page) != 1 || page[0].AccountID <= ids["new"] {
		t.Errorf("the page after the first: %+v %v", page, err)
	}
}
