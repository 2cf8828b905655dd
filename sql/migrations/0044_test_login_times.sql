-- How long the logins of a login test took on each side, in all, over the
-- accounts it has tested: a server that delays logins after failures is
-- named by its own pace (TestFigures.PaceWords), not the task's.
ALTER TABLE tasks
    ADD COLUMN tests_source_ms bigint NOT NULL DEFAULT 0,
    ADD COLUMN tests_destination_ms bigint NOT NULL DEFAULT 0;
