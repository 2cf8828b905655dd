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
SET state = @state, blocking = @blocking, plan = sqlc.narg(plan), error = @error, planned_at = now(),
    folders = @folders, source_messages = @source_messages, source_bytes = @source_bytes,
    to_copy_bytes = @to_copy_bytes, quota_free = @quota_free, problems = @problems
WHERE account_id = @account_id AND task_id = @task_id AND generation = @generation;

-- name: PlanSums :one
-- What the task's plans add up to, from their figures (not their JSON),
-- and what the task's ended passes that copied anything copied, in how
-- long: the rate of the estimate.
SELECT count(*)::int AS planned,
       count(*) FILTER (WHERE state = 'pending')::int AS pending,
       count(*) FILTER (WHERE state = 'done')::int AS done,
       count(*) FILTER (WHERE state = 'failed')::int AS failed,
       count(*) FILTER (WHERE blocking)::int AS blocked,
       count(*) FILTER (WHERE state = 'failed' OR blocking OR problems > 0)::int AS with_problems,
       coalesce(sum(source_bytes), 0)::bigint AS source_bytes,
       coalesce(sum(to_copy_bytes), 0)::bigint AS to_copy_bytes,
       (SELECT coalesce(sum(r.bytes_copied), 0) FROM task_runs r
        WHERE r.task_id = @task_id AND r.ended_at IS NOT NULL AND r.bytes_copied > 0)::bigint AS passes_copied_bytes,
       (SELECT coalesce(extract(epoch FROM sum(r.ended_at - r.started_at)), 0) FROM task_runs r
        WHERE r.task_id = @task_id AND r.ended_at IS NOT NULL AND r.bytes_copied > 0)::float8 AS passes_seconds
FROM account_plans
WHERE task_id = @task_id;

-- name: PlanPage :many
-- A page of the task's plans in brief, by account id after @after, those
-- the filter selects (all, problems, blocking, failed, pending); no limit
-- when page_limit is null. Only the problems are read from the JSON.
SELECT p.account_id, a.source_login, a.destination_login, p.state, p.blocking, p.error, p.requested_at, p.planned_at,
       p.folders, p.source_messages, p.source_bytes, p.to_copy_bytes, p.quota_free,
       coalesce(p.plan -> 'problems', '[]')::jsonb AS problem_list
FROM account_plans p JOIN accounts a ON a.id = p.account_id
WHERE p.task_id = @task_id AND p.account_id > @after
  AND CASE @filter::text
        WHEN 'problems' THEN p.state = 'failed' OR p.blocking OR p.problems > 0
        WHEN 'blocking' THEN p.blocking
        WHEN 'failed' THEN p.state = 'failed'
        WHEN 'pending' THEN p.state = 'pending'
        ELSE true
      END
ORDER BY p.account_id
LIMIT sqlc.narg(page_limit)::int;

-- name: PlanOfAccount :one
-- The account's newest plan, whole.
SELECT p.account_id, a.source_login, a.destination_login, p.state, p.blocking, p.plan, p.error, p.requested_at, p.planned_at
FROM account_plans p JOIN accounts a ON a.id = p.account_id
WHERE p.task_id = @task_id AND p.account_id = @account_id;

-- name: PlansRefusedSelected :one
-- How many of the accounts the filter selects, not in a pass, a pass would
-- leave out for their plan (plan_refused).
SELECT count(*) FROM accounts a
WHERE a.task_id = @task_id AND a.state NOT IN ('queued', 'running')
  AND account_selected(a.id, a.state, a.source_login, a.destination_login, a.source_test_ok, a.destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
  AND plan_refused(a.task_id, a.id);
