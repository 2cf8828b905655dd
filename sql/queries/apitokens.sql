-- name: APITokenCreate :one
INSERT INTO api_tokens (name, token_sha256, expires_at)
VALUES (@name, @token_sha256, sqlc.narg('expires_at'))
RETURNING id;

-- name: APITokenHolder :one
-- The token's id and name, when it is neither revoked nor expired.
SELECT id, name FROM api_tokens
WHERE token_sha256 = @token_sha256
  AND revoked_at IS NULL
  AND (expires_at IS NULL OR expires_at > now());
