-- The IMAP connections that running and admitted accounts of every task
-- hold on one mailbox (host and login, both lower case): a run holds
-- per_source on its source and per_destination on its destination.
-- Admission (AccountsAdmit) bounds each mailbox by it.
CREATE FUNCTION mailbox_connections_held(mailbox_host text, mailbox_login text, per_source int, per_destination int)
RETURNS int LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(CASE WHEN lower(se.host) = mailbox_host AND lower(a.source_login) = mailbox_login THEN per_source ELSE 0 END
                      + CASE WHEN lower(de.host) = mailbox_host AND lower(a.destination_login) = mailbox_login THEN per_destination ELSE 0 END), 0)::int
    FROM accounts_holding_room h
    JOIN accounts a ON a.id = h.id
    JOIN tasks t ON t.id = h.task_id
    JOIN endpoints se ON se.id = t.source_endpoint_id
    JOIN endpoints de ON de.id = t.destination_endpoint_id
    WHERE lower(a.source_login) = mailbox_login OR lower(a.destination_login) = mailbox_login
$$;
