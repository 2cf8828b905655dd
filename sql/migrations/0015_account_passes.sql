-- Each account's record in each pass it ran in: the task's passes keep
-- their sums (task_runs), an account's page and the report show what each
-- pass did for it. Written when the account's run in the pass ends; a
-- second run in the same pass (it joined again) replaces the first.
CREATE TABLE account_passes (
    account_id      bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    task_id         bigint NOT NULL,
    pass            int    NOT NULL,
    state           text   NOT NULL,
    started_at      timestamptz,
    finished_at     timestamptz NOT NULL,
    messages_copied  bigint NOT NULL,
    messages_skipped bigint NOT NULL,
    messages_failed  bigint NOT NULL,
    bytes_copied     bigint NOT NULL,
    source_messages  bigint,
    source_bytes     bigint,
    last_error      text   NOT NULL,
    PRIMARY KEY (account_id, pass)
);
CREATE INDEX account_passes_task_idx ON account_passes (task_id, pass);

-- An account's page lists its events.
CREATE INDEX events_account_id_seq_idx ON events (account_id, seq) WHERE account_id IS NOT NULL;
