-- name: AuditRecord :exec
-- Appends entries, given as one array per column, in their order: the
-- requests answered meanwhile share one statement and one commit.
INSERT INTO audit_log (at, actor, remote, method, route, what, path, status, request_id)
SELECT unnest(@at::timestamptz[]), unnest(@actor::text[]), unnest(@remote::text[]), unnest(@method::text[]),
       unnest(@route::text[]), unnest(@what::text[]), unnest(@path::text[]), unnest(@status::int[]),
       unnest(@request_id::text[]);

-- name: AuditList :many
-- A page of the trail, newest first, before the entry before_id (0: from
-- the newest).
SELECT * FROM audit_log
WHERE @before_id::bigint = 0 OR id < @before_id::bigint
ORDER BY id DESC
LIMIT @max_rows::int;

-- name: AuditPrune :execrows
DELETE FROM audit_log WHERE at < now() - make_interval(secs => @keep_seconds::float8);
