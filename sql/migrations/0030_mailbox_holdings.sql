-- Admission counts the connections held on each mailbox once, not once
-- per ready account: mailbox_connections_held, called twice for every
-- ready account of a task (thousands under one EventsLock), gives way to
-- the view mailbox_holdings, joined to the ready accounts.

-- The runs that running and admitted accounts hold on each mailbox (host
-- and login, both lower case): as a source (source_holds) and as a
-- destination (destination_holds).
CREATE VIEW mailbox_holdings AS
SELECT lower(e.host) AS host,
       lower(CASE WHEN side.source THEN a.source_login ELSE a.destination_login END) AS login,
       count(*) FILTER (WHERE side.source)::int AS source_holds,
       count(*) FILTER (WHERE NOT side.source)::int AS destination_holds
FROM accounts_holding_room h
JOIN accounts a ON a.id = h.id
JOIN tasks t ON t.id = h.task_id
CROSS JOIN (VALUES (true), (false)) AS side (source)
JOIN endpoints e ON e.id = CASE WHEN side.source THEN t.source_endpoint_id ELSE t.destination_endpoint_id END
GROUP BY 1, 2;

-- accounts_admissible: the task's first n ready accounts, in id order,
-- whose mailboxes have room: a mailbox holds at most source_cap
-- connections as a source and destination_cap as a destination (0: no
-- bound), counting every task's running and admitted accounts (a run holds
-- per_source on its source, per_destination on its destination) and the
-- accounts before it here; an account that alone needs more runs alone.
CREATE FUNCTION accounts_admissible(task bigint, per_source int, per_destination int, source_cap int, destination_cap int, n int)
RETURNS SETOF bigint LANGUAGE sql STABLE AS $$
    SELECT ready.id FROM (
        SELECT r.id,
               row_number() OVER (PARTITION BY lower(a.source_login) ORDER BY r.id) AS source_turn,
               row_number() OVER (PARTITION BY lower(a.destination_login) ORDER BY r.id) AS destination_turn,
               coalesce(hs.source_holds * per_source + hs.destination_holds * per_destination, 0) AS source_held,
               coalesce(hd.source_holds * per_source + hd.destination_holds * per_destination, 0) AS destination_held
        FROM accounts_ready r
        JOIN accounts a ON a.id = r.id
        JOIN tasks t ON t.id = r.task_id
        JOIN endpoints se ON se.id = t.source_endpoint_id
        JOIN endpoints de ON de.id = t.destination_endpoint_id
        LEFT JOIN mailbox_holdings hs ON source_cap > 0 AND hs.host = lower(se.host) AND hs.login = lower(a.source_login)
        LEFT JOIN mailbox_holdings hd ON destination_cap > 0 AND hd.host = lower(de.host) AND hd.login = lower(a.destination_login)
        WHERE r.task_id = task
    ) ready
    WHERE (source_cap = 0 OR ready.source_held + ready.source_turn * per_source <= source_cap
           OR (ready.source_held = 0 AND ready.source_turn = 1))
      AND (destination_cap = 0 OR ready.destination_held + ready.destination_turn * per_destination <= destination_cap
           OR (ready.destination_held = 0 AND ready.destination_turn = 1))
    ORDER BY ready.id
    LIMIT n
$$;

DROP FUNCTION mailbox_connections_held(text, text, int, int);
