-- Passes (migration 0011): each run of a task, with its own figures.

-- name: PassStart :one
-- A run begins: its pass is the task's next.
INSERT INTO task_runs (task_id, pass, accounts)
SELECT @task_id::bigint, coalesce(max(pass), 0) + 1, @accounts::int FROM task_runs WHERE task_id = @task_id::bigint
RETURNING pass;

-- name: PassOpen :one
-- The pass of the task's run under way.
SELECT pass FROM task_runs WHERE task_id = @task_id AND ended_at IS NULL;

-- name: PassFigures :one
-- The figures of a pass, from the accounts it queued last.
SELECT count(*) FILTER (WHERE state = 'completed')::int AS accounts_completed,
       count(*) FILTER (WHERE state = 'completed_with_errors')::int AS accounts_with_errors,
       count(*) FILTER (WHERE state = 'failed')::int AS accounts_failed,
       count(*) FILTER (WHERE state = 'canceled')::int AS accounts_canceled,
       coalesce(sum(messages_copied), 0)::bigint AS messages_copied,
       coalesce(sum(messages_skipped), 0)::bigint AS messages_skipped,
       coalesce(sum(messages_failed), 0)::bigint AS messages_failed,
       coalesce(sum(bytes_copied), 0)::bigint AS bytes_copied
FROM accounts WHERE task_id = @task_id AND run_pass = @pass::int;

-- name: PassEnd :exec
-- A pass ends in state, keeping its accounts' figures of now.
UPDATE task_runs
SET ended_at = now(), state = @state::text, accounts_completed = @accounts_completed,
    accounts_with_errors = @accounts_with_errors, accounts_failed = @accounts_failed,
    accounts_canceled = @accounts_canceled, messages_copied = @messages_copied,
    messages_skipped = @messages_skipped, messages_failed = @messages_failed, bytes_copied = @bytes_copied
WHERE task_id = @task_id AND pass = @pass;

-- name: PassList :many
SELECT * FROM task_runs WHERE task_id = @task_id ORDER BY pass;
