-- What happened, for the event log (docs/design.md#events): one row per event, in
-- seq order.
CREATE TABLE events (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    time       timestamptz NOT NULL DEFAULT now(),
    kind       text   NOT NULL,
    task_id    bigint REFERENCES tasks (id) ON DELETE CASCADE,
    account_id bigint,
    side       text   NOT NULL DEFAULT '',
    login      text   NOT NULL DEFAULT '',
    host       text   NOT NULL DEFAULT '',
    port       integer NOT NULL DEFAULT 0,
    error      text   NOT NULL DEFAULT '',
    message    text   NOT NULL DEFAULT ''
);
CREATE INDEX events_task_id_seq_idx ON events (task_id, seq);

-- Background work of a task: how many of its jobs are still to finish, and
-- the state it returns to when they have.
ALTER TABLE tasks ADD COLUMN pending_jobs integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN resume_state text NOT NULL DEFAULT 'idle';
