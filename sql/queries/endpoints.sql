-- name: EndpointIDReserve :one
-- An endpoint's id is taken before the insert: its sealed master password
-- is bound to it.
SELECT nextval(pg_get_serial_sequence('endpoints', 'id'))::bigint AS id;

-- name: EndpointCreate :exec
INSERT INTO endpoints (id, role_label, host, port, tls_mode, tls_skip_verify, auth_method, master_login, master_form, master_password,
                       oauth2_grant, oauth2_token_url, oauth2_client_id, oauth2_scope, oauth2_mechanism, oauth2_client_secret,
                       oauth2_device_url, oauth2_authorization_url, profile, max_message_bytes, daily_download_bytes, daily_upload_bytes,
                       max_connections, max_account_connections, sieve_port, sieve_tls_mode)
VALUES (@id, @role_label, @host, @port, @tls_mode, @tls_skip_verify, @auth_method, @master_login, @master_form,
        sqlc.narg(master_password), @oauth2_grant, @oauth2_token_url, @oauth2_client_id, @oauth2_scope, @oauth2_mechanism,
        sqlc.narg(oauth2_client_secret), @oauth2_device_url, @oauth2_authorization_url, @profile, @max_message_bytes, @daily_download_bytes,
        @daily_upload_bytes, @max_connections, @max_account_connections, @sieve_port, @sieve_tls_mode);

-- name: EndpointGetByID :one
SELECT * FROM endpoints WHERE id = @id;

-- name: EndpointList :many
SELECT * FROM endpoints ORDER BY id;

-- name: EndpointLock :one
-- Locks an endpoint about to change: a task starting with it holds it
-- (TaskEndpointsHold) until the task is running, where EndpointRunningTasks
-- sees it.
SELECT id FROM endpoints WHERE id = @id FOR UPDATE;

-- name: EndpointRunningTasks :one
-- How many tasks in one of the running states use the endpoint.
SELECT count(*) FROM tasks
WHERE (source_endpoint_id = @id OR destination_endpoint_id = @id) AND state = ANY(@running_states::text[]);

-- name: TaskEndpointsHold :exec
-- Holds a starting task's endpoints unchanged until it is running.
SELECT e.id FROM endpoints e
JOIN tasks t ON e.id IN (t.source_endpoint_id, t.destination_endpoint_id)
WHERE t.id = @task_id
FOR SHARE OF e;

-- name: EndpointUpdate :execrows
UPDATE endpoints
SET role_label = @role_label, host = @host, port = @port, tls_mode = @tls_mode,
    tls_skip_verify = @tls_skip_verify, profile = @profile, max_message_bytes = @max_message_bytes,
    daily_download_bytes = @daily_download_bytes, daily_upload_bytes = @daily_upload_bytes,
    max_connections = @max_connections, max_account_connections = @max_account_connections,
    sieve_port = @sieve_port, sieve_tls_mode = @sieve_tls_mode, updated_at = now()
WHERE id = @id;

-- name: EndpointAuthUpdate :exec
-- A master password or client secret left out (NULL) keeps the stored
-- one; leaving the method that uses it forgets it, and so does a switch to
-- or from service_account, whose secret is a key file, not an
-- application's secret.
UPDATE endpoints
SET auth_method = @auth_method, master_login = @master_login, master_form = @master_form,
    master_password = CASE WHEN @auth_method = 'master' THEN coalesce(sqlc.narg(master_password), master_password) END,
    oauth2_grant = @oauth2_grant, oauth2_token_url = @oauth2_token_url, oauth2_client_id = @oauth2_client_id,
    oauth2_scope = @oauth2_scope, oauth2_mechanism = @oauth2_mechanism, oauth2_device_url = @oauth2_device_url,
    oauth2_authorization_url = @oauth2_authorization_url,
    oauth2_client_secret = CASE WHEN @auth_method = 'oauth2'
        THEN coalesce(sqlc.narg(oauth2_client_secret),
                      CASE WHEN (oauth2_grant = 'service_account') = (@oauth2_grant = 'service_account') THEN oauth2_client_secret END) END
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
