-- The two sets of accounts that admission (sql/queries/admission.sql)
-- counts and picks from, named once instead of spelled out in each query;
-- their conditions match the partial indexes of 0007_admission.sql.

-- Accounts that hold room: running, or admitted and about to start.
CREATE VIEW accounts_holding_room AS
SELECT id, task_id FROM accounts
WHERE state = 'running' OR (state = 'queued' AND run_admitted);

-- Queued accounts ready to be admitted: not admitted yet, and past the
-- delay of their retry, if any.
CREATE VIEW accounts_ready AS
SELECT id, task_id FROM accounts
WHERE state = 'queued' AND NOT run_admitted AND (run_not_before IS NULL OR run_not_before <= now());
