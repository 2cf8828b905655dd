-- Acting on some accounts while others run: a running account can be asked
-- to stop on its own (run_cancel), without canceling the task's run. Its
-- job notices when it renews its lease, or at once through its River job.
ALTER TABLE accounts ADD COLUMN run_cancel boolean NOT NULL DEFAULT false;
