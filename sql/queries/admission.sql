-- Admission (see migrations/0007_admission.sql). Every query here runs in
-- a transaction that took EventsLock first: admissions of all processes
-- are serialized, and the room they count stays true until commit.

-- name: AdmissionTasks :many
-- The queued and running tasks with accounts ready to be admitted: their
-- parallelism, the hosts their accounts connect to, how many of their
-- accounts hold room, and how many wait (counted up to max_waiting).
SELECT t.id,
       task_parallel_accounts(t.options, @default_parallel::int)::int AS parallel_accounts,
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
WHERE t.state IN ('queued', 'running') AND NOT t.held
  AND EXISTS (SELECT 1 FROM accounts_ready r WHERE r.task_id = t.id)
ORDER BY t.admitted_at NULLS FIRST, t.id;

-- name: HostConnectionsHeld :many
-- IMAP connections that admitted and running accounts hold on each host,
-- across every task and process: an account holds one to its source and up to
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
-- Admits the task's first count ready accounts whose mailboxes have room
-- (accounts_admissible), each under a new generation for the job that is
-- queued for it, and notes when the task last admitted (admission takes
-- the tasks that waited longest first).
WITH admitted AS (
    UPDATE accounts
    SET run_admitted = true, run_generation = run_generation + 1, updated_at = now()
    WHERE id = ANY(ARRAY(SELECT accounts_admissible(@task_id, @source_connections::int, @destination_connections::int,
                                                     @source_account_connections::int, @destination_account_connections::int, @count::int)))
    RETURNING id, run_generation
), task_admitted AS (
    UPDATE tasks SET admitted_at = clock_timestamp() WHERE id = @task_id
)
SELECT id, run_generation FROM admitted;

-- name: AdmissionPossible :one
-- Whether some queued or running task has an account ready to be admitted
-- (a retry whose delay passed); read without any lock.
SELECT EXISTS (
    SELECT 1 FROM accounts_ready r JOIN tasks t ON t.id = r.task_id
    WHERE t.state IN ('queued', 'running')
);
