-- name: APITokenCreate :one
INSERT INTO api_tokens (name, token_sha256, expires_at, user_id)
VALUES (@name, @token_sha256, sqlc.narg('expires_at'), sqlc.narg('user_id'))
RETURNING id, created_at;

-- name: APITokenHolder :one
-- The token's id and name, and its user's, when it is neither revoked nor
-- expired; no user for the service's own.
SELECT t.id, t.name, t.user_id, coalesce(u.name, '')::text AS user_name, coalesce(u.role, '')::text AS role
FROM api_tokens t LEFT JOIN users u ON u.id = t.user_id
WHERE t.token_sha256 = @token_sha256
  AND t.revoked_at IS NULL
  AND (t.expires_at IS NULL OR t.expires_at > now());

-- name: APITokenList :many
-- The tokens of a user, or everyone's when user_id is 0, newest first.
SELECT t.id, t.name, t.user_id, coalesce(u.name, '')::text AS user_name, t.created_at, t.expires_at, t.revoked_at
FROM api_tokens t LEFT JOIN users u ON u.id = t.user_id
WHERE @user_id::bigint = 0 OR t.user_id = @user_id
ORDER BY t.id DESC;

-- name: APITokenRevoke :execrows
-- Revokes a token of a user (of anyone when user_id is 0); a token
-- revoked already counts, so that revoking is idempotent.
UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
WHERE id = @id AND (@user_id::bigint = 0 OR user_id = @user_id);

-- name: UserCreate :one
INSERT INTO users (name, role) VALUES (@name, @role)
RETURNING id, created_at;

-- name: UserList :many
SELECT id, name, role, created_at FROM users ORDER BY name, id;

-- name: UserDelete :execrows
DELETE FROM users WHERE id = @id;
