-- Admission reads the head of a task's queue, not all of it. Reading the
-- whole queue on every admission (one per account that ends) made a pass
-- of n accounts cost O(n²): at 2 000 waiting accounts, 10 ms of the
-- database's CPU per account admitted.
--
-- Without per-mailbox caps the first n waiting accounts, in id order, are
-- the answer: an index scan of accounts_waiting_idx. With caps, the turns
-- of accounts that share a mailbox (row_number by login, in id order)
-- depend only on the accounts before them, so they are the same over the
-- first 512 waiting accounts as over the whole queue. 512 is 8 times the
-- most a task admits at once (MaxParallelAccounts, 64): enough to find n
-- past mailboxes held elsewhere. Accounts further back wait for the next
-- admission, which comes when an account ends. The limits are constants,
-- and the body plpgsql, so that the planner sees how few rows it reads.
CREATE OR REPLACE FUNCTION accounts_admissible(task bigint, per_source int, per_destination int, source_cap int, destination_cap int, n int)
RETURNS SETOF bigint LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF source_cap = 0 AND destination_cap = 0 THEN
        RETURN QUERY SELECT r.id FROM accounts_ready r WHERE r.task_id = task ORDER BY r.id LIMIT n;
        RETURN;
    END IF;
    RETURN QUERY SELECT ready.id FROM (
        SELECT head.id,
               row_number() OVER (PARTITION BY lower(a.source_login) ORDER BY head.id) AS source_turn,
               row_number() OVER (PARTITION BY lower(a.destination_login) ORDER BY head.id) AS destination_turn,
               coalesce(hs.source_holds * per_source + hs.destination_holds * per_destination, 0) AS source_held,
               coalesce(hd.source_holds * per_source + hd.destination_holds * per_destination, 0) AS destination_held
        FROM (SELECT r.id, r.task_id FROM accounts_ready r WHERE r.task_id = task ORDER BY r.id LIMIT 512) head
        JOIN accounts a ON a.id = head.id
        JOIN tasks t ON t.id = head.task_id
        JOIN endpoints se ON se.id = t.source_endpoint_id
        JOIN endpoints de ON de.id = t.destination_endpoint_id
        LEFT JOIN mailbox_holdings hs ON source_cap > 0 AND hs.host = lower(se.host) AND hs.login = lower(a.source_login)
        LEFT JOIN mailbox_holdings hd ON destination_cap > 0 AND hd.host = lower(de.host) AND hd.login = lower(a.destination_login)
    ) ready
    WHERE (source_cap = 0 OR ready.source_held + ready.source_turn * per_source <= source_cap
           OR (ready.source_held = 0 AND ready.source_turn = 1))
      AND (destination_cap = 0 OR ready.destination_held + ready.destination_turn * per_destination <= destination_cap
           OR (ready.destination_held = 0 AND ready.destination_turn = 1))
    ORDER BY ready.id
    LIMIT n;
END
$$;
