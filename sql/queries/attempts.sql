-- Run control: queueing accounts, starting them within the limits, their
-- leases, and how they end. Every query here that changes an account's
-- state runs in a transaction that took EventsLock first, which also
-- serializes the limit checks of all processes.

-- name: AccountsQueue :execrows
-- Queues the accounts of a task that the filter selects (see
-- account_selected) to wait for admission, in pass (the domain's
-- MoveQueue: from_states, to_state); those queued or running already are
-- left as they are. Their figures start from zero:
-- the pass's figures (pass_figures) are only its own. What earlier
-- attempts of the account in this same pass copied is kept aside, to count
-- too.
UPDATE accounts
SET state = @to_state::text, run_generation = run_generation + 1, run_retries = 0, run_resumed = false,
    run_admitted = false, run_not_before = NULL, heartbeat_at = NULL, updated_at = now(), run_pass = @pass,
    run_cancel = false, folders_total = 0, folders_done = 0, messages_total = 0, messages_copied = 0,
    messages_skipped = 0, messages_failed = 0, bytes_copied = 0,
    pass_copied_before = coalesce((SELECT ap.messages_copied FROM account_passes ap WHERE ap.account_id = accounts.id AND ap.pass = @pass), 0),
    pass_bytes_before = coalesce((SELECT ap.bytes_copied FROM account_passes ap WHERE ap.account_id = accounts.id AND ap.pass = @pass), 0)
WHERE accounts.task_id = @task_id AND accounts.state = ANY (@from_states::text[])
  AND account_selected(accounts.id, accounts.state, accounts.source_login, accounts.destination_login,
                       accounts.source_test_ok, accounts.destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
  AND NOT plan_refused(accounts.task_id, accounts.id)
  AND NOT (@leave_out_refused_logins::bool AND accounts.login_refused <> '');

-- name: AccountsLoginRefusedSelected :one
-- How many of the accounts the filter selects, not in a pass, a scheduled
-- or final pass leaves out because a server refused their login.
SELECT count(*) FROM accounts a
WHERE a.task_id = @task_id AND a.state = ANY (@ready_states::text[]) AND a.login_refused <> ''
  AND account_selected(a.id, a.state, a.source_login, a.destination_login, a.source_test_ok, a.destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
  AND NOT plan_refused(a.task_id, a.id);

-- name: AccountsLoginRefusedClear :exec
-- An endpoint changed: the logins its tasks' servers refused may work now.
UPDATE accounts a SET login_refused = ''
FROM tasks t
WHERE a.task_id = t.id AND a.login_refused <> ''
  AND (t.source_endpoint_id = @endpoint_id OR t.destination_endpoint_id = @endpoint_id);

-- name: AccountQueue :one
-- Queues one account of a task to wait for admission (the domain's
-- MoveQueue, or MoveRequeue for a takeover); queued anew (not a
-- takeover), it counts its retries and figures from zero again and joins
-- pass, keeping aside what its earlier attempts in that pass copied.
UPDATE accounts
SET state = @to_state::text, run_generation = run_generation + 1, heartbeat_at = NULL, updated_at = now(),
    pass_copied_before = CASE WHEN @new_run::bool THEN coalesce((SELECT ap.messages_copied FROM account_passes ap
        WHERE ap.account_id = accounts.id AND ap.pass = coalesce(sqlc.narg('pass')::int, accounts.run_pass)), 0) ELSE pass_copied_before END,
    pass_bytes_before = CASE WHEN @new_run::bool THEN coalesce((SELECT ap.bytes_copied FROM account_passes ap
        WHERE ap.account_id = accounts.id AND ap.pass = coalesce(sqlc.narg('pass')::int, accounts.run_pass)), 0) ELSE pass_bytes_before END,
    folders_total = CASE WHEN @new_run::bool THEN 0 ELSE folders_total END,
    folders_done = CASE WHEN @new_run::bool THEN 0 ELSE folders_done END,
    messages_total = CASE WHEN @new_run::bool THEN 0 ELSE messages_total END,
    messages_copied = CASE WHEN @new_run::bool THEN 0 ELSE messages_copied END,
    messages_skipped = CASE WHEN @new_run::bool THEN 0 ELSE messages_skipped END,
    messages_failed = CASE WHEN @new_run::bool THEN 0 ELSE messages_failed END,
    bytes_copied = CASE WHEN @new_run::bool THEN 0 ELSE bytes_copied END,
    run_admitted = false, run_not_before = NULL, run_pass = coalesce(sqlc.narg('pass')::int, run_pass),
    run_retries = CASE WHEN @new_run::bool THEN 0 ELSE run_retries END,
    run_resumed = NOT @new_run::bool,
    run_cancel = run_cancel AND NOT @new_run::bool
WHERE accounts.task_id = @task_id AND accounts.id = @id AND accounts.state = ANY (@from_states::text[])
RETURNING accounts.id, accounts.run_generation, accounts.source_login;

-- name: AttemptRetry :one
-- Queues again the running account of a generation whose attempt failed on a
-- transient fault, to be admitted after its delay (the domain's
-- MoveRetry).
UPDATE accounts
SET state = @to_state::text, run_generation = run_generation + 1, run_retries = run_retries + 1,
    run_admitted = false, run_not_before = now() + make_interval(secs => @delay_seconds::float8),
    run_resumed = true, last_error = @last_error, heartbeat_at = NULL, updated_at = now()
WHERE task_id = @task_id AND id = @id AND run_generation = @run_generation AND state = ANY (@from_states::text[])
RETURNING run_not_before::timestamptz AS not_before;

-- name: AttemptPark :execrows
-- Queues again the running account of a generation whose attempt paused
-- for longer than an attempt waits (a daily byte budget spent, a long throttle),
-- or stopped for its task's hold (the domain's MovePark, MoveHold):
-- admitted when the pause ends, it goes on where it was. Not a retry:
-- its retries are not counted.
UPDATE accounts
SET state = @to_state::text, run_generation = run_generation + 1, run_admitted = false, run_not_before = @resume_at,
    run_resumed = true, paused_until = @resume_at, last_error = @last_error, heartbeat_at = NULL, updated_at = now()
WHERE task_id = @task_id AND id = @id AND run_generation = @run_generation AND state = ANY (@from_states::text[]);

-- name: AccountFactsLock :one
-- What the domain decides an account's attempt on (migration.AccountFacts),
-- and its login for the events, with the account locked.
SELECT a.state, a.run_generation, a.run_admitted, a.run_cancel, a.run_retries,
       (t.state = @canceling::text)::bool AS task_canceling, t.held AS task_held, a.source_login
FROM accounts a JOIN tasks t ON t.id = a.task_id
WHERE a.task_id = @task_id AND a.id = @id
FOR UPDATE OF a;

-- name: AttemptContext :one
-- What an account's attempt needs, read as it starts: its task, both
-- endpoints, the account with the figures its attempt carries on from, and
-- whether its pass verifies (looks at both servers whatever the source),
-- and its sealed passwords (AccountCredentialsGet). The view lacks the
-- pass and the passwords: they come from the account's own row.
SELECT sqlc.embed(t), sqlc.embed(src), sqlc.embed(dst), sqlc.embed(a),
    coalesce((SELECT r.started_by = ANY(@verifying_starters::text[])
              FROM task_runs r WHERE r.task_id = own.task_id AND r.pass = own.run_pass), true)::bool AS verifying,
    own.source_password, own.destination_password
FROM account_views a
JOIN accounts own ON own.id = a.id
JOIN task_views t ON t.id = a.task_id
JOIN endpoints src ON src.id = t.source_endpoint_id
JOIN endpoints dst ON dst.id = t.destination_endpoint_id
WHERE a.task_id = @task_id AND a.id = @id;

-- name: AttemptStart :exec
-- An account queued anew starts its figures from zero; a resumed one
-- keeps them (its job adds to them). The domain's MoveStart. The first
-- account of a queued pass to start makes its task running (task_from, task_to: the
-- domain's states).
WITH task_started AS (
    UPDATE tasks SET state = @task_to::text, started_at = now(), finished_at = NULL, updated_at = now()
    WHERE tasks.id = @task_id AND tasks.state = @task_from::text
)
UPDATE accounts
SET state = @to_state::text, run_admitted = false, finished_at = NULL, last_error = '', heartbeat_at = now(), updated_at = now(),
    paused_until = NULL,
    started_at = CASE WHEN run_resumed THEN coalesce(started_at, now()) ELSE now() END,
    folders_total = CASE WHEN run_resumed THEN folders_total ELSE 0 END,
    folders_done = CASE WHEN run_resumed THEN folders_done ELSE 0 END,
    messages_total = CASE WHEN run_resumed THEN messages_total ELSE 0 END,
    messages_copied = CASE WHEN run_resumed THEN messages_copied ELSE 0 END,
    messages_skipped = CASE WHEN run_resumed THEN messages_skipped ELSE 0 END,
    messages_failed = CASE WHEN run_resumed THEN messages_failed ELSE 0 END,
    bytes_copied = CASE WHEN run_resumed THEN bytes_copied ELSE 0 END
WHERE accounts.task_id = @task_id AND accounts.id = @id AND accounts.state = ANY (@from_states::text[]);

-- name: AttemptRenew :one
-- Renews the lease of a running account and tells its job the task's
-- state, whether the account was asked to stop, and whether its task's
-- pass is held. No row: the lease has
-- passed to another generation.
UPDATE accounts a
SET heartbeat_at = now()
FROM tasks t
WHERE a.task_id = @task_id AND a.id = @id AND a.run_generation = @run_generation
  AND a.state = 'running' AND t.id = a.task_id
RETURNING t.state, a.run_cancel, t.held;

-- name: AttemptFinish :one
-- Ends the attempt of the generation that holds the account, with its
-- figures (the domain's MoveEnd), and keeps it as the account's record in
-- its pass (account_passes), with what its earlier attempts in the pass
-- copied; the task has one job fewer to wait for. Returns how many
-- accounts it ended (0 or 1), and the task's state and the jobs it still
-- waits for (0 and no state when none ended).
WITH finished AS (
    UPDATE accounts
    SET state = @state, last_error = @last_error, finished_at = now(), heartbeat_at = NULL, updated_at = now(), paused_until = NULL,
        login_refused = @login_refused, folders_total = @folders_total, folders_done = @folders_done, messages_total = @messages_total,
        source_messages = CASE WHEN @source_counted::bool THEN @source_messages::bigint ELSE accounts.source_messages END,
        source_bytes = CASE WHEN @source_counted::bool THEN @source_bytes::bigint ELSE accounts.source_bytes END,
        messages_copied = @messages_copied, messages_skipped = @messages_skipped,
        messages_failed = @messages_failed, bytes_copied = @bytes_copied,
        scripts = coalesce(sqlc.narg(scripts)::jsonb, accounts.scripts)
    WHERE accounts.task_id = @task_id AND accounts.id = @id AND accounts.run_generation = @run_generation
      AND accounts.state = ANY (@from_states::text[])
    RETURNING *
), recorded AS (
    INSERT INTO account_passes (account_id, task_id, pass, state, started_at, finished_at,
        messages_copied, messages_skipped, messages_failed, bytes_copied, source_messages, source_bytes, last_error)
    SELECT f.id, f.task_id, f.run_pass, f.state, f.started_at, f.finished_at,
        f.messages_copied + f.pass_copied_before, f.messages_skipped, f.messages_failed, f.bytes_copied + f.pass_bytes_before,
        f.source_messages, f.source_bytes, f.last_error
    FROM finished f WHERE f.run_pass IS NOT NULL
    ON CONFLICT (account_id, pass) DO UPDATE SET
        state = excluded.state, started_at = excluded.started_at, finished_at = excluded.finished_at,
        messages_copied = excluded.messages_copied, messages_skipped = excluded.messages_skipped,
        messages_failed = excluded.messages_failed, bytes_copied = excluded.bytes_copied,
        source_messages = excluded.source_messages, source_bytes = excluded.source_bytes, last_error = excluded.last_error
), task AS (
    UPDATE tasks SET pending_jobs = pending_jobs - 1, updated_at = now()
    WHERE id = @task_id AND EXISTS (SELECT FROM finished)
    RETURNING state, pending_jobs
)
SELECT (SELECT count(*) FROM finished)::int AS ended,
    coalesce((SELECT state FROM task), '')::text AS task_state,
    coalesce((SELECT pending_jobs FROM task), 0)::int AS pending_jobs;

-- name: AttemptsLost :many
-- Running accounts whose lease was not renewed in time: their process died.
SELECT a.id, a.task_id, a.run_generation
FROM accounts a
WHERE a.state = 'running' AND a.heartbeat_at < now() - make_interval(secs => @expiry_seconds::float8)
ORDER BY a.id
LIMIT 100
FOR UPDATE OF a SKIP LOCKED;

-- name: AttemptsLostExist :one
-- Whether any running account's lease expired, without locking anything.
SELECT EXISTS (
    SELECT 1 FROM accounts
    WHERE state = 'running' AND heartbeat_at < now() - make_interval(secs => @expiry_seconds::float8)
);

-- name: AccountsCancelWaiting :many
-- A cancel of some accounts ends at once those the filter selects whose
-- attempt has not started (the domain's MoveCancel).
UPDATE accounts SET state = @to_state::text, last_error = 'canceled', finished_at = now(), updated_at = now()
WHERE task_id = @task_id AND state = ANY (@from_states::text[])
  AND account_selected(id, state, source_login, destination_login, source_test_ok, destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
RETURNING id;

-- name: AccountsCancelRunning :many
-- A cancel of some accounts asks those the filter selects that run to
-- stop (the domain's MoveStop); each ends canceled when its job has
-- stopped.
UPDATE accounts SET run_cancel = true, updated_at = now()
WHERE task_id = @task_id AND state = ANY (@from_states::text[]) AND NOT run_cancel
  AND account_selected(id, state, source_login, destination_login, source_test_ok, destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text)
RETURNING id;
