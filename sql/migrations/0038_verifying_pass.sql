-- A person's pass may verify: every account looks at both servers, as the
-- final pass does, instead of trusting an unchanged source
-- (docs/design.md#source-only-deltas).
ALTER TABLE task_runs DROP CONSTRAINT task_runs_started_by_check;
ALTER TABLE task_runs ADD CONSTRAINT task_runs_started_by_check
    CHECK (started_by IN ('manual', 'schedule', 'final', 'verify'));
