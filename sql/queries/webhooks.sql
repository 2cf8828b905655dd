-- name: WebhookSet :execrows
-- A secret left out (NULL) keeps the stored one.
UPDATE tasks SET webhook_url = @url, webhook_secret = coalesce(sqlc.narg(secret), webhook_secret), webhook_calls = @calls
WHERE id = @id;

-- name: WebhookRemove :execrows
UPDATE tasks SET webhook_url = '', webhook_secret = NULL WHERE id = @id;

-- name: WebhookGet :one
SELECT webhook_url, webhook_secret, webhook_calls FROM tasks WHERE id = @id;

-- name: WebhookTarget :one
SELECT name, webhook_url, webhook_secret FROM tasks WHERE id = @id;

-- name: WebhookDeliveryCreate :exec
-- A delivery for a task that has a webhook (of an account's event only
-- when it is called per account); none otherwise. The body names the task
-- (id and name), so that a receiver of several tasks' calls tells them
-- apart without asking the API; the end of a pass lists the pass's
-- accounts in not_completed_states (at most 500, and how many in all).
INSERT INTO webhook_deliveries (task_id, event_seq, kind, body)
SELECT t.id, @event_seq, @kind,
       (jsonb_set(@body::jsonb, '{task}', jsonb_build_object('id', t.id, 'name', t.name))
        || CASE WHEN @lists_accounts::bool THEN jsonb_build_object(
             'accounts_not_completed', coalesce((
                 SELECT jsonb_agg(jsonb_build_object('account_id', f.id, 'login', f.source_login, 'state', f.state, 'error', f.last_error) ORDER BY f.id)
                 FROM (SELECT a.id, a.source_login, a.state, a.last_error FROM accounts a
                       WHERE a.task_id = t.id AND a.run_pass = p.pass AND a.state = ANY(@not_completed_states::text[])
                       ORDER BY a.id LIMIT 500) f), '[]'::jsonb),
             'accounts_not_completed_total', (
                 SELECT count(*) FROM accounts a
                 WHERE a.task_id = t.id AND a.run_pass = p.pass AND a.state = ANY(@not_completed_states::text[])))
           ELSE '{}'::jsonb END)::text
FROM tasks t
CROSS JOIN LATERAL (SELECT max(r.pass) AS pass FROM task_runs r WHERE r.task_id = t.id) p
WHERE t.id = @task_id AND t.webhook_url <> '' AND (NOT @per_account::bool OR t.webhook_calls = 'per_account');

-- name: DeliveryClaim :one
-- The oldest delivery due on channel (webhook or mail), leased to the
-- caller for lease_seconds: another process skips it meanwhile, and takes
-- it again if the caller dies. With the task's webhook and recipients.
UPDATE webhook_deliveries d
SET next_attempt_at = now() + make_interval(secs => @lease_seconds::float8)
FROM tasks t
WHERE d.id = (SELECT w.id FROM webhook_deliveries w
              WHERE w.state = 'pending' AND w.channel = @channel AND w.next_attempt_at <= now()
              ORDER BY w.id LIMIT 1 FOR UPDATE SKIP LOCKED)
  AND t.id = d.task_id
RETURNING d.id, d.task_id, d.kind, d.body, d.attempts, t.webhook_url, t.webhook_secret, t.mail_to;

-- name: WebhookDeliveryAttempted :exec
-- How an attempt went: delivered, failed for good, or due again at
-- next_attempt_at.
UPDATE webhook_deliveries
SET attempts = attempts + 1, last_status = @status, last_error = @error, state = @state,
    next_attempt_at = @next_attempt_at,
    finished_at = CASE WHEN @state <> 'pending' THEN now() END
WHERE id = @id;

-- name: WebhookDeliveryList :many
SELECT id, event_seq, kind, state, attempts, last_status, last_error, created_at, next_attempt_at, finished_at
FROM webhook_deliveries
WHERE task_id = @task_id AND channel = @channel
ORDER BY id DESC
LIMIT @max_rows;

-- name: DeliveriesGiveUp :exec
-- Gives up the task's deliveries still due on channel, with the reason:
-- the webhook or the recipients were removed.
UPDATE webhook_deliveries
SET state = 'failed', last_error = @reason, finished_at = now()
WHERE task_id = @task_id AND channel = @channel AND state = 'pending';
