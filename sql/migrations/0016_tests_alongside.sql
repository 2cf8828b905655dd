-- Connection tests of some accounts while the task runs a migration: the
-- task stays queued or running, and counts the tests it waits for here,
-- apart from the run's pending_jobs. 0 when no such test is under way; a
-- task never has both kinds of test at once.
ALTER TABLE tasks ADD COLUMN tests_pending int NOT NULL DEFAULT 0;
