-- Connection tests at scale: each task has at most its parallelism of
-- tests in the queue at a time, the next queued as one ends, so that a
-- test of many accounts never holds up another task's; a test can be
-- canceled; the task counts what was tested so far.

-- Where an account is in its task's current test: waiting for its job,
-- queued (its job exists), or NULL (tested, or not part of a test). Each
-- test has a new generation: only its jobs may record an outcome.
ALTER TABLE accounts ADD COLUMN test_state text CHECK (test_state IN ('waiting', 'queued'));
ALTER TABLE accounts ADD COLUMN test_generation bigint NOT NULL DEFAULT 0;
CREATE INDEX accounts_test_waiting_idx ON accounts (task_id, id) WHERE test_state = 'waiting';

-- The figures of the task's current or last test.
ALTER TABLE tasks ADD COLUMN tests_total integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN tests_done integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN tests_failed integer NOT NULL DEFAULT 0;

-- Tests queued by an older version have no generation: they are dropped,
-- and their tasks return to where they were.
UPDATE tasks SET state = resume_state, pending_jobs = 0, updated_at = now() WHERE state = 'testing';
