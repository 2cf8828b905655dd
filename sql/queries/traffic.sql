-- The bytes each mailbox moved (migrations/0023_endpoint_limits.sql),
-- for the daily byte budgets. Spending runs in a transaction that holds
-- the mailbox's advisory lock, so that every process reads and adds under
-- it.

-- name: TrafficLock :exec
SELECT pg_advisory_xact_lock(hashtextextended(@server::text || ' ' || @login::text || ' ' || @direction::text, 0));

-- name: TrafficLastDay :many
-- The mailbox's bytes by hour since @since, oldest first; the hours
-- before it, which no budget counts any more, go in the same statement.
WITH forgotten AS (
    DELETE FROM mailbox_traffic old
    WHERE old.server = @server AND old.login = @login AND old.direction = @direction AND old.hour <= @since
)
SELECT t.hour, t.bytes FROM mailbox_traffic t
WHERE t.server = @server AND t.login = @login AND t.direction = @direction AND t.hour > @since
ORDER BY t.hour;

-- name: TrafficAdd :exec
INSERT INTO mailbox_traffic (server, login, direction, hour, bytes)
VALUES (@server, @login, @direction, @hour, @bytes)
ON CONFLICT (server, login, direction, hour) DO UPDATE SET bytes = mailbox_traffic.bytes + excluded.bytes;
