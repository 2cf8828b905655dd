-- name: APITokenCreate :one
INSERT INTO api_tokens (name, token_sha256, expires_at)
VALUES (@name, @token_sha256, sqlc.narg('expires_at'))
RETURNING id;

-- name: APITokenValid :one
SELECT EXISTS (
    SELECT 1 FROM api_tokens
    WHERE token_sha256 = @token_sha256
      AND revoked_at IS NULL
      AND (expires_at IS NULL OR expires_at > now())
);
