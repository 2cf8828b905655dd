-- Plans (migration 0028): each account's dry run.

-- name: PlansRequest :many
-- A new plan of the task's accounts that the filter selects: pending, of
-- a newer generation; the jobs to queue.
INSERT INTO account_plans (account_id, task_id)
SELECT a.id, a.task_id FROM accounts a
WHERE a.task_id = @task_id
  AND account_selected(a.id, a.state, a.source_login, a.destination_login, a.source_test_ok, a.destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
ON CONFLICT (account_id) DO UPDATE
SET generation = account_plans.generation + 1, state = 'pending', requested_at = now(), error = ''
RETURNING account_id, generation;

-- name: PlanRecord :execrows
-- A plan's job records what it found, if its plan is still the newest.
UPDATE account_plans
SET state = @state, blocking = @blocking, plan = sqlc.narg(plan), error = @error, planned_at = now()
WHERE account_id = @account_id AND task_id = @task_id AND generation = @generation;

-- name: PlanList :many
-- The task's accounts' plans, by account id, with their logins.
SELECT p.account_id, a.source_login, a.destination_login, p.state, p.blocking, p.plan, p.error, p.requested_at, p.planned_at
FROM account_plans p JOIN accounts a ON a.id = p.account_id
WHERE p.task_id = @task_id
ORDER BY p.account_id;

-- name: PlansRefusedSelected :one
-- How many of the accounts the filter selects, not in a run, a run would
-- leave out for their plan (plan_refused).
SELECT count(*) FROM accounts a
WHERE a.task_id = @task_id AND a.state NOT IN ('queued', 'running')
  AND account_selected(a.id, a.state, a.source_login, a.destination_login, a.source_test_ok, a.destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
  AND plan_refused(a.task_id, a.id);
