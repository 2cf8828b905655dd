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

-- name: AccountPage :many
-- A page of a task's accounts in the order sort_by names (see
-- migration.AccountOrder), after the position (after_key, after_id) when
-- after_id is given. Every order is one text key, compared bytewise (C
-- collation), then the id, so that one comparison pages them all;
-- state_order ranks the states for sort_by 'state'.
SELECT sqlc.embed(v), k.sort_key
FROM account_views v
CROSS JOIN LATERAL (SELECT (CASE @sort_by::text
        WHEN 'login' THEN lower(v.source_login)
        WHEN 'state' THEN lpad(array_position(@state_order::text[], v.state)::text, 2, '0') || lower(v.source_login)
        WHEN 'progress' THEN lpad((CASE
            WHEN v.state IN ('completed', 'completed_with_errors') THEN 1000
            WHEN v.messages_total = 0 THEN 0
            ELSE least(1000, (v.messages_copied + v.messages_skipped + v.messages_failed) * 1000 / v.messages_total)
            END)::text, 4, '0')
        WHEN 'updated' THEN to_char(v.updated_at AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS')
        ELSE '' END)::text AS sort_key) k
WHERE v.task_id = @task_id
  AND account_selected(v.id, v.state, v.source_login, v.destination_login, v.source_test_ok, v.destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
  AND (sqlc.narg('after_id')::bigint IS NULL
   OR (NOT @descending::boolean AND (k.sort_key COLLATE "C" > @after_key::text
       OR (k.sort_key = @after_key::text AND v.id > sqlc.narg('after_id')::bigint)))
   OR (@descending::boolean AND (k.sort_key COLLATE "C" < @after_key::text
       OR (k.sort_key = @after_key::text AND v.id < sqlc.narg('after_id')::bigint))))
ORDER BY CASE WHEN @descending::boolean THEN k.sort_key COLLATE "C" END DESC,
         CASE WHEN @descending::boolean THEN v.id END DESC,
         k.sort_key COLLATE "C", v.id
LIMIT sqlc.narg('max_rows');

-- name: AccountCount :one
-- How many of a task's accounts AccountPage's filters select.
SELECT count(*) FROM accounts
WHERE task_id = @task_id
  AND account_selected(id, state, source_login, destination_login, source_test_ok, destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text);

-- name: AccountsDeleteSelected :execrows
-- Deletes the accounts of a task that the filter selects.
DELETE FROM accounts
WHERE task_id = @task_id
  AND account_selected(id, state, source_login, destination_login, source_test_ok, destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text);

-- name: AccountUpdate :execrows
-- Replaces the logins; a NULL password keeps the stored one, and
-- link_destination makes the destination's the source's again. A change
-- of what a login uses outdates the last login test. An account queued or
-- running is left as it is (no row): its attempt uses what it read.
UPDATE accounts
SET source_login = @source_login,
    destination_login = @destination_login,
    source_password = coalesce(sqlc.narg('source_password'), source_password),
    destination_password = CASE WHEN @link_destination::bool THEN NULL
                                ELSE coalesce(sqlc.narg('destination_password'), destination_password) END,
    credentials_changed_at = CASE
        WHEN source_login <> @source_login OR destination_login <> @destination_login
          OR sqlc.narg('source_password')::bytea IS NOT NULL OR sqlc.narg('destination_password')::bytea IS NOT NULL
          OR (@link_destination::bool AND destination_password IS NOT NULL)
        THEN now() ELSE credentials_changed_at END,
    -- A person edited the account: its logins are worth trying again.
    login_refused = '',
    updated_at = now()
WHERE task_id = @task_id AND id = @id AND state NOT IN ('queued', 'running');

-- name: AccountDelete :execrows
DELETE FROM accounts WHERE task_id = @task_id AND id = @id;

-- name: AccountCredentialsGet :one
SELECT source_login, source_password, destination_login, destination_password
FROM accounts WHERE task_id = @task_id AND id = @id;

-- name: AccountStatsByTask :many
-- Account counts and totals per task and state; the task's figures are
-- derived from these, never stored twice. Each row also carries what the
-- task's accounts copied in all ended passes (the same on every row of a
-- task): with what the pass under way copied so far, the task's totals to
-- date. One query, so that reading a task or the list
-- costs one round trip for its figures.
WITH ended AS (
    SELECT p.task_id, coalesce(sum(p.messages_copied), 0)::bigint AS messages_copied,
           coalesce(sum(p.bytes_copied), 0)::bigint AS bytes_copied
    FROM account_passes p
    WHERE p.task_id = ANY (@task_ids::bigint[])
    GROUP BY p.task_id
), by_state AS (
SELECT task_id, state, count(*)::bigint AS accounts,
       coalesce(sum(messages_copied), 0)::bigint AS messages_copied,
       coalesce(sum(bytes_copied), 0)::bigint AS bytes_copied,
       coalesce(sum(messages_skipped), 0)::bigint AS messages_skipped,
       coalesce(sum(messages_failed), 0)::bigint AS messages_failed,
       coalesce(sum(source_messages), 0)::bigint AS source_messages,
       coalesce(sum(source_bytes), 0)::bigint AS source_bytes,
       count(source_messages)::bigint AS accounts_counted,
       count(*) FILTER (WHERE login_refused = '' AND (coalesce(source_test_ok AND destination_test_ok, false)
                                                      OR state = ANY (@logged_in_states::text[])))::bigint AS logins_working,
       count(*) FILTER (WHERE login_refused <> '')::bigint AS logins_refused
FROM accounts
WHERE task_id = ANY (@task_ids::bigint[])
GROUP BY task_id, state
)
SELECT s.task_id, s.state, s.accounts, s.messages_copied, s.bytes_copied, s.messages_skipped, s.messages_failed,
       s.source_messages, s.source_bytes, s.accounts_counted, s.logins_working, s.logins_refused,
       coalesce(e.messages_copied, 0)::bigint AS ended_messages_copied,
       coalesce(e.bytes_copied, 0)::bigint AS ended_bytes_copied
FROM by_state s LEFT JOIN ended e ON e.task_id = s.task_id;

-- name: AccountLoginsTaken :many
-- Which of these source logins the task has already (uses the unique index).
SELECT source_login FROM accounts
WHERE task_id = @task_id AND source_login = ANY (@logins::text[]);

-- name: AccountTestRecord :exec
-- A test's result; a source it counted gives the account its total before
-- an attempt does (a running account keeps its attempt's count).
UPDATE accounts
SET source_test_ok = @source_ok, source_test_error = @source_error, source_tested_at = now(),
    destination_test_ok = @destination_ok, destination_test_error = @destination_error,
    destination_tested_at = now(), updated_at = now(), login_refused = @login_refused,
    source_messages = CASE WHEN @source_counted::bool AND state <> 'running' THEN @source_messages::bigint ELSE source_messages END,
    source_bytes = CASE WHEN @source_counted::bool AND state <> 'running' THEN @source_bytes::bigint ELSE source_bytes END
WHERE task_id = @task_id AND id = @id;

-- name: AccountsCancelQueued :many
-- A cancel ends the accounts whose attempt has not started (the domain's
-- MoveCancel).
UPDATE accounts SET state = @to_state::text, finished_at = now(), updated_at = now()
WHERE task_id = @task_id AND state = ANY (@from_states::text[])
RETURNING id;

-- name: AccountProgressSet :exec
UPDATE accounts
SET folders_total = @folders_total, folders_done = @folders_done, messages_total = @messages_total,
    source_messages = CASE WHEN @source_counted::bool THEN @source_messages::bigint ELSE source_messages END,
    source_bytes = CASE WHEN @source_counted::bool THEN @source_bytes::bigint ELSE source_bytes END,
    messages_copied = @messages_copied, messages_skipped = @messages_skipped,
    messages_failed = @messages_failed, bytes_copied = @bytes_copied, updated_at = now(),
    paused_until = sqlc.narg(paused_until)
WHERE task_id = @task_id AND id = @id;

-- name: AccountCountsByState :many
-- Accounts of every task by state, for /metrics.
SELECT state, count(*)::bigint AS accounts FROM accounts GROUP BY state ORDER BY state;

-- name: AccountSourceSecretSet :exec
-- A refresh token the authorization server rotated, or a new sign-in
-- handed out, replaces the stored one: not a change by a person, so the
-- login test stays current; but the grant works, so no login is refused.
UPDATE accounts SET source_password = @secret, login_refused = '' WHERE task_id = @task_id AND id = @id;

-- name: AccountDestinationSecretSet :exec
-- As AccountSourceSecretSet, for the destination (a linked destination
-- gets a token of its own).
UPDATE accounts SET destination_password = @secret, login_refused = '' WHERE task_id = @task_id AND id = @id;
