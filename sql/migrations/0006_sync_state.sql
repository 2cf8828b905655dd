-- The copy engine's sync state (docs/design.md#the-uid-map-and-sync-state), per account and source folder:
-- the folder pair's state (UIDVALIDITYs, where the folder went, refused
-- messages, what both folders looked like at the end of the last run),
-- and the UID map from each copied source message to its destination copy,
-- packed in chunks of source UIDs so that a folder of a million messages
-- costs a few hundred rows, read and written a UID window at a time.

CREATE TABLE sync_folders (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    folder     text   NOT NULL, -- the source folder
    state      jsonb  NOT NULL,
    PRIMARY KEY (account_id, folder)
);

CREATE TABLE sync_map_chunks (
    account_id      bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    folder          text   NOT NULL,
    -- The chunk's entries have first_source ≤ source UID ≤ last_source;
    -- chunks of one folder never overlap.
    first_source    bigint NOT NULL,
    last_source     bigint NOT NULL,
    -- The highest destination UID of the chunk: the engine asks for the
    -- mapped destination UIDs from some UID on, and most chunks are below.
    max_destination bigint NOT NULL,
    -- internal/postgres/syncmap.go: flag sets, then (source, destination,
    -- flag set) per entry as varint deltas.
    entries         bytea  NOT NULL,
    PRIMARY KEY (account_id, folder, first_source)
);

-- The state of the engine before UID maps: a watermark that re-runs
-- cannot trust. Without it, each folder is reconciled once by identity.
ALTER TABLE accounts DROP COLUMN sync_state;

-- A queued run that takes up where a run of the same pass stopped (a retry
-- after a transient fault, or a takeover from a process that died) keeps
-- the account's figures, so that they describe the whole pass.
ALTER TABLE accounts ADD COLUMN run_resumed boolean NOT NULL DEFAULT false;
