-- Passes (migration 0011): a task's passes, each with its own figures.

-- name: PassNext :one
-- The number of the task's next pass.
SELECT (coalesce(max(pass), 0) + 1)::int AS pass FROM task_runs WHERE task_id = @task_id;

-- name: PassStart :exec
-- Pass number pass begins, of accounts; started_by says what started it.
INSERT INTO task_runs (task_id, pass, accounts, started_by) VALUES (@task_id, @pass, @accounts, @started_by);

-- name: PassJoin :exec
-- accounts more join the task's pass under way.
UPDATE task_runs SET accounts = accounts + @accounts
WHERE task_id = @task_id AND ended_at IS NULL;

-- name: PassOpen :one
-- The number of the task's pass under way, 0 with none.
SELECT coalesce(max(pass), 0)::int AS pass FROM task_runs WHERE task_id = @task_id AND ended_at IS NULL;

-- name: PassEnd :many
-- The task's open pass ends in state, keeping its accounts' figures of
-- now; it says which pass ended (none for one begun before passes were recorded) and
-- which pass of the task began as final (0 before one did).
UPDATE task_runs r
SET ended_at = now(), state = @state::text,
    accounts_completed = f.accounts_completed, accounts_with_errors = f.accounts_with_errors,
    accounts_failed = f.accounts_failed, accounts_canceled = f.accounts_canceled,
    messages_copied = f.messages_copied, messages_skipped = f.messages_skipped,
    messages_failed = f.messages_failed, bytes_copied = f.bytes_copied,
    source_messages = f.source_messages, source_bytes = f.source_bytes, accounts_uncounted = f.accounts_uncounted
FROM pass_figures f
WHERE r.task_id = @task_id AND r.ended_at IS NULL AND f.task_id = @task_id AND f.pass = r.pass
RETURNING r.pass, coalesce((SELECT s.final_pass FROM task_schedules s WHERE s.task_id = r.task_id), 0)::int AS final_pass;

-- name: PassList :many
-- A task's passes, first first: one that ended with the figures it kept
-- (joined to no figures), the one under way with its accounts' of now.
SELECT r.pass, r.started_by, r.accounts, r.started_at, r.ended_at, r.state,
       coalesce(f.accounts_completed, r.accounts_completed) AS accounts_completed,
       coalesce(f.accounts_with_errors, r.accounts_with_errors) AS accounts_with_errors,
       coalesce(f.accounts_failed, r.accounts_failed) AS accounts_failed,
       coalesce(f.accounts_canceled, r.accounts_canceled) AS accounts_canceled,
       coalesce(f.messages_copied, r.messages_copied) AS messages_copied,
       coalesce(f.messages_skipped, r.messages_skipped) AS messages_skipped,
       coalesce(f.messages_failed, r.messages_failed) AS messages_failed,
       coalesce(f.bytes_copied, r.bytes_copied) AS bytes_copied,
       coalesce(f.source_messages, r.source_messages) AS source_messages,
       coalesce(f.source_bytes, r.source_bytes) AS source_bytes,
       coalesce(f.accounts_uncounted, r.accounts_uncounted) AS accounts_uncounted
FROM task_runs r
LEFT JOIN pass_figures f ON r.ended_at IS NULL AND f.task_id = @task_id AND f.pass = r.pass
WHERE r.task_id = @task_id
ORDER BY r.pass;
