-- name: LoginFailureRecord :exec
-- A server refused a login the service made; a day's record is enough.
WITH pruned AS (DELETE FROM login_failures WHERE at < now() - interval '1 day')
INSERT INTO login_failures (host) VALUES (lower(@host));

-- name: LoginHostLock :exec
-- Claims on one host take turns (in the transaction that claims).
SELECT pg_advisory_xact_lock(hashtext('login_failures/' || lower(@host)));

-- name: LoginFailuresRecent :one
-- The failed (or claimed) logins on host within the last window, and when
-- the oldest of them was.
SELECT count(*)::int AS failures, coalesce(min(at), now())::timestamptz AS oldest
FROM login_failures
WHERE host = lower(@host) AND at > now() - make_interval(secs => @window_seconds::float8);

-- name: LoginAttemptClaim :one
INSERT INTO login_failures (host) VALUES (lower(@host)) RETURNING id;

-- name: LoginAttemptSucceeded :exec
-- The claimed login worked: it is no failure.
DELETE FROM login_failures WHERE id = @id;
