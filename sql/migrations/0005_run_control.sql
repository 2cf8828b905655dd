-- Run control: leases on running accounts, figures on events.

-- Each time an account is queued its generation grows, and its job carries
-- the generation it was queued with: only that job may start, renew or
-- finish the account's run. A job whose process died is replaced by a new
-- generation, and the old one, should it ever run again, changes nothing.
ALTER TABLE accounts ADD COLUMN run_generation bigint NOT NULL DEFAULT 0;
-- The lease of a running account: its job renews it while it works; one
-- that stops being renewed belongs to a process that died.
ALTER TABLE accounts ADD COLUMN heartbeat_at timestamptz;
-- Retries of a run that failed on a transient fault (the network, a server
-- that is unavailable), counted from the run's start.
ALTER TABLE accounts ADD COLUMN run_retries integer NOT NULL DEFAULT 0;
CREATE INDEX accounts_running_heartbeat_idx ON accounts (heartbeat_at) WHERE state = 'running';

-- Events may carry the folder they are about and an account's figures
-- (account.progress, folder.done, account.done).
ALTER TABLE events ADD COLUMN folder text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN progress jsonb;
