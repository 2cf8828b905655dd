-- name: AuditRecord :exec
INSERT INTO audit_log (actor, remote, method, route, what, path, status, request_id)
VALUES (@actor, @remote, @method, @route, @what, @path, @status, @request_id);

-- name: AuditList :many
-- A page of the trail, newest first, before the entry before_id (0: from
-- the newest).
SELECT * FROM audit_log
WHERE @before_id::bigint = 0 OR id < @before_id::bigint
ORDER BY id DESC
LIMIT @max_rows::int;

-- name: AuditPrune :execrows
DELETE FROM audit_log WHERE at < now() - make_interval(secs => @keep_seconds::float8);
