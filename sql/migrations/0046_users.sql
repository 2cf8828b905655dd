-- Users and their roles (docs/security.md#users-and-roles): a personal
-- API token belongs to a user, whose role decides what its requests may
-- do. A token of no user is the service's own (made at its first start),
-- an admin's.
CREATE TABLE users (
    id         bigserial   PRIMARY KEY,
    name       text        NOT NULL UNIQUE CHECK (name <> ''),
    role       text        NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE api_tokens ADD COLUMN user_id bigint REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX api_tokens_user ON api_tokens (user_id);
