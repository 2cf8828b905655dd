-- Each account's record in each pass (migration 0015).

-- name: AccountPassesRecordCanceled :exec
-- Keeps the accounts of a task that a cancel ended while they waited, in
-- the pass they were queued in: one queued anew with nothing done (queueing
-- zeroed its figures; the source's count is an earlier pass's), one
-- waiting to retry or resume with what its pass did so far. An earlier
-- record of the pass keeps its figures.
INSERT INTO account_passes (account_id, task_id, pass, state, started_at, finished_at,
    messages_copied, messages_skipped, messages_failed, bytes_copied, source_messages, source_bytes, last_error)
SELECT a.id, a.task_id, a.run_pass, a.state, CASE WHEN a.run_resumed THEN a.started_at END, coalesce(a.finished_at, now()),
    a.messages_copied, a.messages_skipped, a.messages_failed, a.bytes_copied,
    CASE WHEN a.run_resumed THEN a.source_messages END, CASE WHEN a.run_resumed THEN a.source_bytes END, a.last_error
FROM accounts a WHERE a.task_id = @task_id AND a.id = ANY (@ids::bigint[]) AND a.run_pass IS NOT NULL
ON CONFLICT (account_id, pass) DO UPDATE SET
    state = excluded.state, finished_at = excluded.finished_at, last_error = excluded.last_error;

-- name: AccountPassList :many
-- One account's passes, first first.
SELECT * FROM account_passes WHERE task_id = @task_id AND account_id = @account_id ORDER BY pass;

-- name: AccountPassesByTask :many
-- Every account's passes of a task, for the report.
SELECT * FROM account_passes WHERE task_id = @task_id ORDER BY account_id, pass;
