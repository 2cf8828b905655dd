-- A task's cut-over: its schedule of delta passes and of the final pass,
-- and whether it is paused.

-- A task that is paused starts no pass, by hand or by schedule, until it
-- is resumed.
ALTER TABLE tasks ADD COLUMN paused_at timestamptz;

-- What started a pass: a person (or a client of the API), the schedule,
-- or the final pass (at its time, or "final pass now").
ALTER TABLE task_runs
    ADD COLUMN started_by text NOT NULL DEFAULT 'manual' CHECK (started_by IN ('manual', 'schedule', 'final'));

-- The schedule of a task: delta passes every every_minutes, or at the
-- clock times at_times in time_zone, until until_at; the final pass at
-- final_at. next_at is the next delta pass due (NULL: none, the schedule
-- has ended or has only a final pass); final_pass is the number of the
-- pass that began as final (0 before). The process that starts a pass
-- due holds the row and moves next_at on in the same transaction, so one
-- pass starts per slot however many processes share the database.
CREATE TABLE task_schedules (
    task_id       bigint PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    every_minutes int    NOT NULL DEFAULT 0 CHECK (every_minutes >= 0),
    at_times      text[] NOT NULL DEFAULT '{}',
    time_zone     text   NOT NULL,
    until_at      timestamptz,
    final_at      timestamptz,
    next_at       timestamptz,
    final_pass    int    NOT NULL DEFAULT 0,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_schedules_next ON task_schedules (next_at) WHERE next_at IS NOT NULL;
CREATE INDEX task_schedules_final ON task_schedules (final_at) WHERE final_pass = 0 AND final_at IS NOT NULL;
