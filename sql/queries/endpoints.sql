-- name: EndpointCreate :one
INSERT INTO endpoints (role_label, host, port, tls_mode, tls_skip_verify)
VALUES (@role_label, @host, @port, @tls_mode, @tls_skip_verify)
RETURNING id;

-- name: EndpointGetByID :one
SELECT * FROM endpoints WHERE id = @id;

-- name: EndpointList :many
SELECT * FROM endpoints ORDER BY id;

-- name: EndpointUpdate :execrows
UPDATE endpoints
SET role_label = @role_label, host = @host, port = @port, tls_mode = @tls_mode,
    tls_skip_verify = @tls_skip_verify, updated_at = now()
WHERE id = @id;

-- name: EndpointDelete :execrows
DELETE FROM endpoints WHERE id = @id;

-- name: EndpointsOfTask :one
-- The task's source and destination endpoints.
SELECT sqlc.embed(src), sqlc.embed(dst)
FROM tasks t
JOIN endpoints src ON src.id = t.source_endpoint_id
JOIN endpoints dst ON dst.id = t.destination_endpoint_id
WHERE t.id = @task_id;
