-- name: SecretKeyCheckGet :one
SELECT sealed FROM secret_key_check;

-- name: SecretKeyCheckCreate :execrows
INSERT INTO secret_key_check (sealed) VALUES (@sealed) ON CONFLICT DO NOTHING;
