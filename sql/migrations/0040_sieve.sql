-- An endpoint's ManageSieve service (RFC 5804), where its accounts' Sieve
-- scripts (filters, vacation replies) live: 0, none, and scripts are not
-- moved. Its TLS mode is its own: ManageSieve's usual is STARTTLS on 4190
-- whatever the IMAP port's.
ALTER TABLE endpoints
    ADD COLUMN sieve_port integer NOT NULL DEFAULT 0 CHECK (sieve_port BETWEEN 0 AND 65535),
    ADD COLUMN sieve_tls_mode text NOT NULL DEFAULT 'starttls' CHECK (sieve_tls_mode IN ('ssl', 'starttls', 'plain'));

-- What became of an account's Sieve scripts at the last run that moved
-- them (migration.ScriptsEnd as JSON): copied, unchanged, renamed folders,
-- refusals in the destination's words. NULL: never moved.
ALTER TABLE accounts ADD COLUMN scripts jsonb;

CREATE OR REPLACE VIEW account_views AS
SELECT id, task_id, source_login, destination_login, state,
       source_test_ok, source_test_error, source_tested_at,
       destination_test_ok, destination_test_error, destination_tested_at,
       folders_total, folders_done, messages_total, messages_copied,
       messages_skipped, messages_failed, bytes_copied, last_error,
       created_at, updated_at, started_at, finished_at,
       (destination_password IS NULL)::boolean AS destination_linked_to_source, credentials_changed_at,
       source_messages, source_bytes, paused_until, login_refused, scripts
FROM accounts;
