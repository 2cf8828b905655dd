-- name: AuthorizationStart :exec
-- A new browser authorization of an account's side replaces the one under
-- way, and the expired ones of every account go.
WITH gone AS (
    DELETE FROM oauth_authorizations
    WHERE (account_id = @account_id AND side = @side) OR expires_at < now()
)
INSERT INTO oauth_authorizations (state_digest, task_id, account_id, side, redirect_uri, code_verifier, expires_at, also_accept)
VALUES (@state_digest, @task_id, @account_id, @side, @redirect_uri, @code_verifier, @expires_at, coalesce(@also_accept::text[], '{}'));

-- name: AuthorizationTake :one
-- A state is good once: taking it ends the authorization.
DELETE FROM oauth_authorizations
WHERE state_digest = @state_digest
RETURNING *;
