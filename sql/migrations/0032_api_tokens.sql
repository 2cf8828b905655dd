-- API tokens kept in the database by their SHA-256 alone, never in clear:
-- the one a service started without a configured token makes for itself
-- (written to the data dir for the local CLI, and shown as a sign-in
-- link), valid until revoked or past its expiry.
CREATE TABLE api_tokens (
    id           bigserial PRIMARY KEY,
    name         text NOT NULL CHECK (name <> ''),
    token_sha256 bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz
);
