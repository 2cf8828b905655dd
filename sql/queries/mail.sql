-- Mail (migration 0029): a task's recipients and the mails it owes.

-- name: MailSet :execrows
UPDATE tasks SET mail_to = @mail_to::text[] WHERE id = @id;

-- name: MailGet :one
SELECT mail_to FROM tasks WHERE id = @id;

-- name: MailDeliveryCreate :exec
-- A mail for a task that has recipients; none otherwise.
INSERT INTO webhook_deliveries (task_id, event_seq, kind, body, channel)
SELECT t.id, @event_seq, @kind, @body, 'mail' FROM tasks t WHERE t.id = @task_id AND t.mail_to <> '{}';

-- name: MailDeliveryClaim :one
-- The oldest mail due, leased to the caller for lease_seconds, with the
-- task's recipients.
UPDATE webhook_deliveries d
SET next_attempt_at = now() + make_interval(secs => @lease_seconds::float8)
FROM tasks t
WHERE d.id = (SELECT id FROM webhook_deliveries
              WHERE state = 'pending' AND channel = 'mail' AND next_attempt_at <= now()
              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  AND t.id = d.task_id
RETURNING d.id, d.task_id, d.kind, d.body, d.attempts, t.mail_to;
