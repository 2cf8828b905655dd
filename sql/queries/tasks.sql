-- name: TaskCreate :one
INSERT INTO tasks (name, source_endpoint_id, destination_endpoint_id, options)
VALUES (@name, @source_endpoint_id, @destination_endpoint_id, @options)
RETURNING id;

-- name: TaskList :many
SELECT * FROM task_views ORDER BY id;

-- name: TaskViewGet :one
SELECT * FROM task_views WHERE id = @id;

-- name: TaskUpdate :exec
-- Replaces the definition of a task (the domain decided it may:
-- TaskFactsLock).
UPDATE tasks
SET name = @name, source_endpoint_id = @source_endpoint_id,
    destination_endpoint_id = @destination_endpoint_id, options = @options,
    updated_at = now()
WHERE id = @id;

-- name: TaskDelete :exec
-- Deletes a task and, by cascade, its accounts (the domain decided it
-- may: TaskFactsLock).
DELETE FROM tasks WHERE id = @id;

-- name: TaskOptionsGet :one
SELECT options FROM tasks WHERE id = @id;

-- name: TaskPendingJobs :one
SELECT pending_jobs FROM tasks WHERE id = @id;

-- name: TaskStateGet :one
SELECT state FROM tasks WHERE id = @id;

-- name: TaskFactsLock :one
-- What the domain decides a command on (migration.TaskFacts), the task's
-- row held until the transaction ends: commands on one task take turns,
-- and no pass starts or ends while one is applied. The passes' facts,
-- which only the final pass reads, are read with pass_facts alone: every
-- account edited or run would otherwise count the task's pass records.
SELECT t.state, (t.paused_at IS NOT NULL)::bool AS paused, (t.tests_pending > 0)::bool AS test_running,
    (SELECT count(*) FROM accounts a WHERE a.task_id = t.id)::bigint AS accounts,
    (CASE WHEN @pass_facts::bool THEN
        (SELECT count(DISTINCT p.account_id) FROM account_passes p
         WHERE p.task_id = t.id AND p.state = ANY(@completed_states::text[]))
     ELSE 0 END)::bigint AS completed,
    (@pass_facts::bool AND EXISTS (SELECT 1 FROM task_runs r JOIN task_schedules s ON s.task_id = r.task_id AND s.final_pass = r.pass
            WHERE r.task_id = t.id AND r.ended_at IS NULL))::bool AS final_under_way
FROM tasks t WHERE t.id = @id FOR NO KEY UPDATE OF t;

-- name: TaskStateSet :execrows
UPDATE tasks SET state = @state, updated_at = now() WHERE id = @id;

-- name: TaskCountByEndpoint :one
SELECT count(*) FROM tasks
WHERE source_endpoint_id = @endpoint_id OR destination_endpoint_id = @endpoint_id;

-- name: TaskStartJobs :one
-- Moves a task that is not running into state with n jobs to wait for,
-- remembering the state to return to. No row: missing or running.
UPDATE tasks
SET resume_state = state, state = @state, pending_jobs = @jobs, updated_at = now()
WHERE id = @id AND state <> ALL (@running_states::text[])
RETURNING id;

-- name: TaskJoinJobs :one
-- n jobs more join the pass of a queued or running task. No row: the task
-- is missing, or is not running a migration.
UPDATE tasks SET pending_jobs = pending_jobs + @jobs::int, updated_at = now()
WHERE id = @id AND state IN ('queued', 'running')
RETURNING id;

-- name: AccountIDsByTask :many
SELECT id FROM accounts WHERE task_id = @task_id ORDER BY id;

-- name: AccountCountByTask :one
SELECT count(*)::int FROM accounts WHERE task_id = @task_id;

-- name: TaskPassEnd :exec
-- The pass's last account is done: the task takes its end state.
UPDATE tasks SET state = @state, finished_at = now(), updated_at = now() WHERE id = @id;

-- name: AccountStatesByTask :many
SELECT state, count(*)::bigint AS accounts FROM accounts WHERE task_id = @task_id GROUP BY state;

-- name: TaskCancel :one
-- A queued or running pass, or a test, is asked to stop; returns the state
-- it was in.
UPDATE tasks t SET state = 'canceling', updated_at = now()
FROM (SELECT b.id, b.state FROM tasks b WHERE b.id = @id FOR UPDATE) before
WHERE t.id = before.id AND t.state = ANY(@cancelable_states::text[])
RETURNING before.state;

-- name: TaskJobsEnded :one
-- Jobs of the task that ended: tests done or dropped, or accounts' jobs
-- that a cancel ended before they started. After the last, a test returns the
-- task to the state before it (a pass's end is the domain's: endPass).
-- Returns the state the task had before.
UPDATE tasks t
SET pending_jobs = t.pending_jobs - @jobs::int,
    state = CASE WHEN t.pending_jobs - @jobs::int <= 0 AND @test::bool THEN t.resume_state ELSE t.state END,
    updated_at = now()
FROM (SELECT b.id, b.state FROM tasks b WHERE b.id = @id FOR UPDATE) before
WHERE t.id = before.id
RETURNING before.state AS previous_state, t.pending_jobs, t.tests_total, t.tests_done, t.tests_failed;
