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

-- pass_figures: what each pass's accounts did, as they stand now.
CREATE VIEW pass_figures AS
SELECT task_id, run_pass AS pass,
       count(*) FILTER (WHERE state = 'completed')::int AS accounts_completed,
       count(*) FILTER (WHERE state = 'completed_with_errors')::int AS accounts_with_errors,
       count(*) FILTER (WHERE state = 'failed')::int AS accounts_failed,
       count(*) FILTER (WHERE state = 'canceled')::int AS accounts_canceled,
       coalesce(sum(messages_copied), 0)::bigint AS messages_copied,
       coalesce(sum(messages_skipped), 0)::bigint AS messages_skipped,
       coalesce(sum(messages_failed), 0)::bigint AS messages_failed,
       coalesce(sum(bytes_copied), 0)::bigint AS bytes_copied
FROM accounts WHERE run_pass IS NOT NULL
GROUP BY task_id, run_pass;
