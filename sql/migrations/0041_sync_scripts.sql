-- What the engine last put of each Sieve script of an account on the
-- destination (syncstate.ScriptState as JSON: the servers and the
-- content's SHA-256): a later pass tells a script changed on the source
-- from one the user edited on the destination since, and keeps the edit.
CREATE TABLE sync_scripts (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       text   NOT NULL, -- the script's name on both servers
    state      jsonb  NOT NULL,
    PRIMARY KEY (account_id, name)
);
