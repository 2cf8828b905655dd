-- name: AccountIDsReserve :many
-- Account ids are taken before the insert: each sealed password is bound
-- to its row's id.
SELECT nextval(pg_get_serial_sequence('accounts', 'id'))::bigint AS id
FROM generate_series(1, @count::int);

-- name: AccountCopyFrom :copyfrom
INSERT INTO accounts (id, task_id, source_login, source_password, destination_login, destination_password)
VALUES (@id, @task_id, @source_login, @source_password, @destination_login, @destination_password);

-- name: AccountGet :one
SELECT * FROM account_views WHERE task_id = @task_id AND id = @id;

-- name: AccountList :many
SELECT * FROM account_views
WHERE task_id = @task_id AND id > @after_id
ORDER BY id
LIMIT sqlc.narg('max_rows');

-- name: AccountUpdate :execrows
-- Replaces the logins; a NULL password keeps the stored one.
UPDATE accounts
SET source_login = @source_login,
    destination_login = @destination_login,
    source_password = coalesce(sqlc.narg('source_password'), source_password),
    destination_password = coalesce(sqlc.narg('destination_password'), destination_password),
    updated_at = now()
WHERE task_id = @task_id AND id = @id;

-- name: AccountDelete :execrows
DELETE FROM accounts WHERE task_id = @task_id AND id = @id;

-- name: AccountCredentialsGet :one
SELECT source_login, source_password, destination_login, destination_password
FROM accounts WHERE task_id = @task_id AND id = @id;

-- name: AccountStatsByTask :many
-- Account counts and totals per task and state; the task's figures are
-- derived from these, never stored twice.
SELECT task_id, state, count(*)::bigint AS accounts,
       coalesce(sum(messages_copied), 0)::bigint AS messages_copied,
       coalesce(sum(bytes_copied), 0)::bigint AS bytes_copied,
       coalesce(sum(messages_skipped), 0)::bigint AS messages_skipped,
       coalesce(sum(messages_failed), 0)::bigint AS messages_failed
FROM accounts
WHERE task_id = ANY (@task_ids::bigint[])
GROUP BY task_id, state;

-- name: AccountLoginsTaken :many
-- Which of these source logins the task has already (uses the unique index).
SELECT source_login FROM accounts
WHERE task_id = @task_id AND source_login = ANY (@logins::text[]);

-- name: AccountTestRecord :exec
UPDATE accounts
SET source_test_ok = @source_ok, source_test_error = @source_error, source_tested_at = now(),
    destination_test_ok = @destination_ok, destination_test_error = @destination_error,
    destination_tested_at = now(), updated_at = now()
WHERE task_id = @task_id AND id = @id;

-- name: AccountsCancelQueued :execrows
-- A cancel ends the accounts whose run has not started.
UPDATE accounts SET state = 'canceled', finished_at = now(), updated_at = now()
WHERE task_id = @task_id AND state = 'queued';

-- name: AccountProgressSet :exec
UPDATE accounts
SET folders_total = @folders_total, folders_done = @folders_done, messages_total = @messages_total,
    messages_copied = @messages_copied, messages_skipped = @messages_skipped,
    messages_failed = @messages_failed, bytes_copied = @bytes_copied, updated_at = now()
WHERE task_id = @task_id AND id = @id;

-- name: AccountCountsByState :many
-- Accounts of every task by state, for /metrics.
SELECT state, count(*)::bigint AS accounts FROM accounts GROUP BY state ORDER BY state;
