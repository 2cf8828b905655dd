-- name: TaskCreate :one
INSERT INTO tasks (name, source_endpoint_id, destination_endpoint_id, options)
VALUES (@name, @source_endpoint_id, @destination_endpoint_id, @options)
RETURNING id;

-- name: TaskGetByID :one
SELECT * FROM tasks WHERE id = @id;

-- name: TaskList :many
SELECT * FROM tasks ORDER BY id;

-- name: TaskUpdate :execrows
-- Replaces the definition of a task unless it is running.
UPDATE tasks
SET name = @name, source_endpoint_id = @source_endpoint_id,
    destination_endpoint_id = @destination_endpoint_id, options = @options,
    updated_at = now()
WHERE id = @id AND state <> ALL (@running_states::text[]);

-- name: TaskDelete :execrows
-- Deletes a task (and by cascade its accounts) unless it is running.
DELETE FROM tasks WHERE id = @id AND state <> ALL (@running_states::text[]);

-- name: TaskOptionsGet :one
SELECT options FROM tasks WHERE id = @id;

-- name: TaskStateGet :one
SELECT state FROM tasks WHERE id = @id;

-- name: TaskStartLock :one
-- TaskStateLock for work that may start a pass: whether the task is
-- paused too.
SELECT state, (paused_at IS NOT NULL)::bool AS paused FROM tasks WHERE id = @id FOR SHARE;

-- name: TaskStateLock :one
-- Holds the task's state still until the transaction ends: a run cannot
-- start while accounts are being added, changed or deleted.
SELECT state FROM tasks WHERE id = @id FOR SHARE;

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
-- n jobs more join the run of a queued or running task. No row: the task
-- is missing, or is not running a migration.
UPDATE tasks SET pending_jobs = pending_jobs + @jobs::int, updated_at = now()
WHERE id = @id AND state IN ('queued', 'running')
RETURNING id;

-- name: AccountIDsByTask :many
SELECT id FROM accounts WHERE task_id = @task_id ORDER BY id;

-- name: AccountCountByTask :one
SELECT count(*)::int FROM accounts WHERE task_id = @task_id;

-- name: TaskRunStarted :exec
-- The first account of a queued run starts: the task is running.
UPDATE tasks SET state = 'running', started_at = now(), finished_at = NULL, updated_at = now()
WHERE id = @id AND state = 'queued';

-- name: TaskFinishRunJob :one
-- One account of a run is done; returns how many remain and the task's
-- state (canceling or not).
UPDATE tasks SET pending_jobs = pending_jobs - 1, updated_at = now()
WHERE id = @id
RETURNING state, pending_jobs;

-- name: TaskRunEnd :exec
-- The run's last account is done: the task takes its end state.
UPDATE tasks SET state = @state, finished_at = now(), updated_at = now() WHERE id = @id;

-- name: AccountStatesByTask :many
SELECT state, count(*)::bigint AS accounts FROM accounts WHERE task_id = @task_id GROUP BY state;

-- name: TaskCancel :one
-- A queued or running run, or a test, is asked to stop; returns the state
-- it was in.
UPDATE tasks t SET state = 'canceling', updated_at = now()
FROM (SELECT b.id, b.state FROM tasks b WHERE b.id = @id FOR UPDATE) before
WHERE t.id = before.id AND t.state IN ('queued', 'running', 'testing')
RETURNING before.state;

-- name: TaskJobsEnded :one
-- Jobs of the task that ended: tests done or dropped, or runs that a
-- cancel ended before they started. After the last, a test returns the
-- task to the state before it (a run's end is the domain's: endRun).
-- Returns the state the task had before.
UPDATE tasks t
SET pending_jobs = t.pending_jobs - @jobs::int,
    state = CASE WHEN t.pending_jobs - @jobs::int <= 0 AND @test::bool THEN t.resume_state ELSE t.state END,
    updated_at = now()
FROM (SELECT b.id, b.state FROM tasks b WHERE b.id = @id FOR UPDATE) before
WHERE t.id = before.id
RETURNING before.state AS previous_state, t.pending_jobs, t.tests_total, t.tests_done, t.tests_failed;
