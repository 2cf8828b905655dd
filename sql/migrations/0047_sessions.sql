-- The console's sign-in with a name and a password
-- (docs/security.md#signing-in): a user's password as an Argon2id digest
-- (NULL: none, tokens only), failed sign-ins counted toward a lock-out,
-- and the sessions a sign-in opens, by the SHA-256 of their cookie
-- alone, each with the CSRF token its state-changing requests carry.
ALTER TABLE users
    ADD COLUMN password_digest text,
    ADD COLUMN failed_signins int NOT NULL DEFAULT 0,
    ADD COLUMN signin_locked_until timestamptz;

CREATE TABLE sessions (
    id            bigserial   PRIMARY KEY,
    cookie_sha256 bytea       NOT NULL UNIQUE CHECK (length(cookie_sha256) = 32),
    user_id       bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token    text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);
