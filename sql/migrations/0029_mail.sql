-- Word by mail: who a task mails the summary and the report to when a
-- pass ends, and the mails owed, in the delivery log the webhooks keep
-- (channel tells them apart).
ALTER TABLE tasks ADD COLUMN mail_to text[] NOT NULL DEFAULT '{}';

ALTER TABLE webhook_deliveries
    ADD COLUMN channel text NOT NULL DEFAULT 'webhook' CHECK (channel IN ('webhook', 'mail'));
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (channel, next_attempt_at) WHERE state = 'pending';
