-- When a server throttled an account's run: the run pauses until then,
-- and goes on where it was. NULL when it is not paused; the next progress
-- stored, and the run's start and end, clear it.
ALTER TABLE accounts ADD COLUMN paused_until timestamptz;

CREATE OR REPLACE VIEW account_views AS
SELECT id, task_id, source_login, destination_login, state,
       source_test_ok, source_test_error, source_tested_at,
       destination_test_ok, destination_test_error, destination_tested_at,
       folders_total, folders_done, messages_total, messages_copied,
       messages_skipped, messages_failed, bytes_copied, last_error,
       created_at, updated_at, started_at, finished_at,
       (destination_password IS NULL)::boolean AS destination_linked_to_source, credentials_changed_at,
       source_messages, source_bytes, paused_until
FROM accounts;
