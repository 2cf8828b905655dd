-- Passes: every run of a task (of all its accounts, some, or one) is a pass
-- with a record of its own, so that a re-run on cut-over day does not
-- replace what the first pass did. An account belongs to the pass that last
-- queued it (accounts.run_pass); the figures of a pass are its accounts'
-- when it ends, and read from them live while it runs.
CREATE TABLE task_runs (
    task_id    bigint NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    pass       int    NOT NULL,  -- 1, 2, … within the task
    accounts   int    NOT NULL,  -- queued when it started
    started_at timestamptz NOT NULL DEFAULT now(),
    ended_at   timestamptz,      -- NULL while it runs
    state      text CHECK (state IN ('completed', 'completed_with_errors', 'failed', 'canceled')),
    accounts_completed   int    NOT NULL DEFAULT 0,
    accounts_with_errors int    NOT NULL DEFAULT 0,
    accounts_failed      int    NOT NULL DEFAULT 0,
    accounts_canceled    int    NOT NULL DEFAULT 0,
    messages_copied      bigint NOT NULL DEFAULT 0,
    messages_skipped     bigint NOT NULL DEFAULT 0,
    messages_failed      bigint NOT NULL DEFAULT 0,
    bytes_copied         bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (task_id, pass)
);

ALTER TABLE accounts ADD COLUMN run_pass int;
