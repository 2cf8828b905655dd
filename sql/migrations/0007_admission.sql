-- Admission: a queued account gets its job only when its task and the
-- hosts it connects to have room for it. Whatever frees room (an account
-- ending, a cancel, a requeue) admits the next waiting accounts in the
-- same transaction, so waiting accounts cost nothing while they wait.

-- Admitted: the account holds room under the limits and its job is in the
-- queue. Its generation grew with the admission: only that job starts it.
ALTER TABLE accounts ADD COLUMN run_admitted boolean NOT NULL DEFAULT false;
-- A retry after a transient fault waits until then before it is admitted.
ALTER TABLE accounts ADD COLUMN run_not_before timestamptz;
-- When the task last had an account admitted: tasks that waited longest
-- go first among equals.
ALTER TABLE tasks ADD COLUMN admitted_at timestamptz;

CREATE INDEX accounts_waiting_idx ON accounts (task_id, id) WHERE state = 'queued' AND NOT run_admitted;
CREATE INDEX accounts_holding_room_idx ON accounts (task_id) WHERE state = 'running' OR (state = 'queued' AND run_admitted);
