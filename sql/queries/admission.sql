-- Admission (see migrations/0007_admission.sql). Every query here runs in
-- a transaction that took EventsLock first: admissions of all processes
-- are serialized, and the room they count stays true until commit.

-- name: AdmissionTasks :many
-- The queued and running tasks with accounts ready to be admitted: their
-- parallelism, the hosts their accounts connect to, how many of their
-- accounts hold room, and how many wait (counted up to max_waiting).
SELECT t.id,
       coalesce((t.options ->> 'parallel_accounts')::int, @default_parallel::int)::int AS parallel_accounts,
       lower(se.host)::text AS source_host, lower(de.host)::text AS destination_host,
       se.profile AS source_profile, de.profile AS destination_profile,
       se.max_connections AS source_max_connections, de.max_connections AS destination_max_connections,
       se.max_account_connections AS source_max_account_connections,
       de.max_account_connections AS destination_max_account_connections,
       (SELECT count(*) FROM accounts_holding_room h WHERE h.task_id = t.id)::int AS holding,
       (SELECT count(*) FROM (SELECT 1 FROM accounts_ready r WHERE r.task_id = t.id
          LIMIT @max_waiting::int) ready)::int AS waiting
FROM tasks t
JOIN endpoints se ON se.id = t.source_endpoint_id
JOIN endpoints de ON de.id = t.destination_endpoint_id
WHERE t.state IN ('queued', 'running')
  AND EXISTS (SELECT 1 FROM accounts_ready r WHERE r.task_id = t.id)
ORDER BY t.admitted_at NULLS FIRST, t.id;

-- name: HostConnectionsHeld :many
-- IMAP connections that admitted and running accounts hold on each host,
-- across every task and process: a run holds one to its source and up to
-- two to its destination (one of them for MULTIAPPEND).
SELECT host::text, sum(connections)::int AS connections FROM (
    SELECT lower(se.host) AS host, @source_connections::int AS connections
    FROM accounts_holding_room h JOIN tasks t ON t.id = h.task_id JOIN endpoints se ON se.id = t.source_endpoint_id
    UNION ALL
    SELECT lower(de.host), @destination_connections::int
    FROM accounts_holding_room h JOIN tasks t ON t.id = h.task_id JOIN endpoints de ON de.id = t.destination_endpoint_id
) held
GROUP BY host;

-- name: AccountsAdmit :many
-- Admits the task's first count ready accounts, each under a new
-- generation for the job that is queued for it, leaving out those whose
-- mailbox has no room: a mailbox (host and login) holds at most
-- source_account_connections connections as a source, and
-- destination_account_connections as a destination (0: no limit), counted
-- over every task's running and admitted accounts, and those admitted
-- here in id order; an account that alone needs more runs alone.
UPDATE accounts
SET run_admitted = true, run_generation = run_generation + 1, updated_at = now()
WHERE id IN (
    SELECT ready.id FROM (
        SELECT r.id,
               row_number() OVER (PARTITION BY lower(a.source_login) ORDER BY r.id) AS source_turn,
               row_number() OVER (PARTITION BY lower(a.destination_login) ORDER BY r.id) AS destination_turn,
               CASE WHEN @source_account_connections::int > 0
                    THEN mailbox_connections_held(@source_host::text, lower(a.source_login), @source_connections::int, @destination_connections::int)
                    ELSE 0 END AS source_held,
               CASE WHEN @destination_account_connections::int > 0
                    THEN mailbox_connections_held(@destination_host::text, lower(a.destination_login), @source_connections::int, @destination_connections::int)
                    ELSE 0 END AS destination_held
        FROM accounts_ready r
        JOIN accounts a ON a.id = r.id
        WHERE r.task_id = @task_id
    ) ready
    WHERE (@source_account_connections = 0
           OR ready.source_held + ready.source_turn * @source_connections <= @source_account_connections
           OR (ready.source_held = 0 AND ready.source_turn = 1))
      AND (@destination_account_connections = 0
           OR ready.destination_held + ready.destination_turn * @destination_connections <= @destination_account_connections
           OR (ready.destination_held = 0 AND ready.destination_turn = 1))
    ORDER BY ready.id
    LIMIT @count::int)
RETURNING id, run_generation;

-- name: TaskAdmitted :exec
UPDATE tasks SET admitted_at = clock_timestamp() WHERE id = @id;

-- name: AdmissionPossible :one
-- Whether some queued or running task has an account ready to be admitted
-- (a retry whose delay passed); read without any lock.
SELECT EXISTS (
    SELECT 1 FROM accounts_ready r JOIN tasks t ON t.id = r.task_id
    WHERE t.state IN ('queued', 'running')
);
