-- A task's webhook: where word goes when a pass ends or an account fails,
-- and the secret its bodies are signed with (sealed like a password; NULL
-- without a webhook).
ALTER TABLE tasks
    ADD COLUMN webhook_url text NOT NULL DEFAULT '',
    ADD COLUMN webhook_secret bytea;

-- Each call a webhook owes, and how its attempts went: the delivery log.
-- The body is fixed when the event happens, so every attempt sends the
-- same bytes. next_attempt_at also leases a delivery under way to the
-- process sending it.
CREATE TABLE webhook_deliveries (
    id bigserial PRIMARY KEY,
    task_id bigint NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    event_seq bigint NOT NULL,
    kind text NOT NULL,
    body text NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts int NOT NULL DEFAULT 0,
    last_status int NOT NULL DEFAULT 0,
    last_error text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_task ON webhook_deliveries (task_id, id);
