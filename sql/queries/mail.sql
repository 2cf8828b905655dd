-- Mail (migration 0029): a task's recipients and the mails it owes.

-- name: MailSet :execrows
UPDATE tasks SET mail_to = @mail_to::text[] WHERE id = @id;

-- name: MailGet :one
SELECT mail_to FROM tasks WHERE id = @id;

-- name: MailDeliveryCreate :exec
-- A mail for a task that has recipients; none otherwise.
INSERT INTO webhook_deliveries (task_id, event_seq, kind, body, channel)
SELECT t.id, @event_seq, @kind, @body, 'mail' FROM tasks t WHERE t.id = @task_id AND t.mail_to <> '{}';
