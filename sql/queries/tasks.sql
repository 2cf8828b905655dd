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

-- name: TaskStateGet :one
SELECT state FROM tasks WHERE id = @id;

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

-- name: TaskFinishJob :one
-- One job of the task is done; the last one returns the task to the state
-- it had before.
UPDATE tasks
SET pending_jobs = pending_jobs - 1,
    state = CASE WHEN pending_jobs <= 1 THEN resume_state ELSE state END,
    updated_at = now()
WHERE id = @id
RETURNING state, pending_jobs;

-- name: AccountIDsByTask :many
SELECT id FROM accounts WHERE task_id = @task_id ORDER BY id;
