-- Run control: queueing accounts, starting them within the limits, their
-- leases, and how they end. Every query here that changes an account's
-- state runs in a transaction that took EventsLock first, which also
-- serializes the limit checks of all processes.

-- name: AccountsQueue :many
-- Queues every account of a task, each with a new generation for its job.
UPDATE accounts
SET state = 'queued', run_generation = run_generation + 1, run_retries = 0, run_resumed = false,
    heartbeat_at = NULL, updated_at = now()
WHERE task_id = @task_id
RETURNING id, run_generation;

-- name: AccountQueue :one
-- Queues one account of a task with a new generation for its job; a new
-- run (not a takeover) counts its retries from zero again.
UPDATE accounts
SET state = 'queued', run_generation = run_generation + 1, heartbeat_at = NULL, updated_at = now(),
    run_retries = CASE WHEN @new_run::bool THEN 0 ELSE run_retries END,
    run_resumed = NOT @new_run::bool
WHERE task_id = @task_id AND id = @id
RETURNING id, run_generation, source_login;

-- name: AccountRunRetry :one
-- Queues again the running account of a generation whose run failed on a
-- transient fault, unless it has had max_retries already (no row then).
UPDATE accounts
SET state = 'queued', run_generation = run_generation + 1, run_retries = run_retries + 1,
    run_resumed = true, last_error = @last_error, heartbeat_at = NULL, updated_at = now()
WHERE task_id = @task_id AND id = @id AND run_generation = @run_generation AND state = 'running'
  AND run_retries < @max_retries::int
RETURNING run_generation, run_retries;

-- name: AccountRunLock :one
-- The account a job is about to start, locked; with its task's
-- parallelism and the hosts its run connects to.
SELECT a.state, a.run_generation,
       coalesce((t.options ->> 'parallel_accounts')::int, @default_parallel::int)::int AS parallel_accounts,
       lower(se.host) AS source_host, lower(de.host) AS destination_host
FROM accounts a
JOIN tasks t ON t.id = a.task_id
JOIN endpoints se ON se.id = t.source_endpoint_id
JOIN endpoints de ON de.id = t.destination_endpoint_id
WHERE a.task_id = @task_id AND a.id = @id
FOR UPDATE OF a;

-- name: AccountsRunningByTask :one
SELECT count(*)::int FROM accounts WHERE task_id = @task_id AND state = 'running';

-- name: HostConnectionsInUse :one
-- IMAP connections that running accounts hold on a host, across every
-- task and process: a run holds one to its source and up to two to its
-- destination (one of them for MULTIAPPEND).
SELECT coalesce(sum(
    CASE WHEN lower(se.host) = @host::text THEN @source_connections::int ELSE 0 END +
    CASE WHEN lower(de.host) = @host::text THEN @destination_connections::int ELSE 0 END), 0)::int
FROM accounts a
JOIN tasks t ON t.id = a.task_id
JOIN endpoints se ON se.id = t.source_endpoint_id
JOIN endpoints de ON de.id = t.destination_endpoint_id
WHERE a.state = 'running' AND (lower(se.host) = @host::text OR lower(de.host) = @host::text);

-- name: AccountRunStart :exec
-- A new run starts its figures from zero; a resumed one keeps them (its
-- job adds to them).
UPDATE accounts
SET state = 'running', finished_at = NULL, last_error = '', heartbeat_at = now(), updated_at = now(),
    started_at = CASE WHEN run_resumed THEN coalesce(started_at, now()) ELSE now() END,
    folders_total = CASE WHEN run_resumed THEN folders_total ELSE 0 END,
    folders_done = CASE WHEN run_resumed THEN folders_done ELSE 0 END,
    messages_total = CASE WHEN run_resumed THEN messages_total ELSE 0 END,
    messages_copied = CASE WHEN run_resumed THEN messages_copied ELSE 0 END,
    messages_skipped = CASE WHEN run_resumed THEN messages_skipped ELSE 0 END,
    messages_failed = CASE WHEN run_resumed THEN messages_failed ELSE 0 END,
    bytes_copied = CASE WHEN run_resumed THEN bytes_copied ELSE 0 END
WHERE task_id = @task_id AND id = @id;

-- name: AccountRunRenew :one
-- Renews the lease of a running account and tells its job the task's
-- state. No row: the lease has passed to another generation.
UPDATE accounts a
SET heartbeat_at = now()
FROM tasks t
WHERE a.task_id = @task_id AND a.id = @id AND a.run_generation = @run_generation
  AND a.state = 'running' AND t.id = a.task_id
RETURNING t.state;

-- name: AccountRunFinish :execrows
-- Ends the run of the generation that holds the account; no row for an
-- outcome that came too late (the account was requeued meanwhile).
UPDATE accounts
SET state = @state, last_error = @last_error, finished_at = now(), heartbeat_at = NULL, updated_at = now()
WHERE task_id = @task_id AND id = @id AND run_generation = @run_generation AND state = 'running';

-- name: AccountsRunExpired :many
-- Running accounts whose lease was not renewed in time: their process died.
SELECT a.id, a.task_id, a.run_generation, a.source_login, t.state AS task_state
FROM accounts a JOIN tasks t ON t.id = a.task_id
WHERE a.state = 'running' AND a.heartbeat_at < now() - make_interval(secs => @expiry_seconds::float8)
ORDER BY a.id
LIMIT 100
FOR UPDATE OF a SKIP LOCKED;

-- name: AccountsRunExpiredExist :one
-- Whether any running account's lease expired, without locking anything.
SELECT EXISTS (
    SELECT 1 FROM accounts
    WHERE state = 'running' AND heartbeat_at < now() - make_interval(secs => @expiry_seconds::float8)
);
