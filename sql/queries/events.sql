-- name: EventAppend :many
-- Adds events in the order given (the arrays are read in step, in order),
-- which their seq values follow; 0 stands for no task or account, '' for
-- no progress. Returns their seq and time, in that order. Wakes the live
-- streams of every process once the transaction commits.
WITH added AS (
INSERT INTO events (kind, task_id, account_id, side, login, host, port, error, message, folder, progress)
SELECT unnest(@kinds::text[]), nullif(unnest(@task_ids::bigint[]), 0), nullif(unnest(@account_ids::bigint[]), 0),
       unnest(@sides::text[]), unnest(@logins::text[]), unnest(@hosts::text[]), unnest(@ports::integer[]),
       unnest(@errors::text[]), unnest(@messages::text[]), unnest(@folders::text[]),
       nullif(unnest(@progress::text[]), '')::jsonb
RETURNING seq, time
), woke AS (
    SELECT pg_notify('mailmigrate_events', '')
)
SELECT seq, time FROM added, woke ORDER BY seq;

-- name: EventListByTask :many
SELECT * FROM events
WHERE task_id = @task_id AND seq > @after_seq
ORDER BY seq
LIMIT @max_rows;

-- name: EventListByAccount :many
SELECT * FROM events
WHERE task_id = @task_id AND account_id = @account_id AND seq > @after_seq
ORDER BY seq
LIMIT @max_rows;

-- name: EventListAll :many
SELECT * FROM events
WHERE seq > @after_seq
ORDER BY seq
LIMIT @max_rows;

-- name: EventLatestSeq :one
-- The seq of the newest event; 0 when there is none.
SELECT coalesce(max(seq), 0)::bigint FROM events;
