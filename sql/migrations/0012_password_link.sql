-- "Destination password: the same as the source" is a link, not a copy: a
-- NULL destination_password means the source password, whatever it is
-- changed to later. credentials_changed_at tells a login test that came
-- before a change of logins or passwords (outdated) from one after it.
ALTER TABLE accounts ALTER COLUMN destination_password DROP NOT NULL;
ALTER TABLE accounts ADD COLUMN credentials_changed_at timestamptz;

CREATE OR REPLACE VIEW account_views AS
SELECT id, task_id, source_login, destination_login, state,
       source_test_ok, source_test_error, source_tested_at,
       destination_test_ok, destination_test_error, destination_tested_at,
       folders_total, folders_done, messages_total, messages_copied,
       messages_skipped, messages_failed, bytes_copied, last_error,
       created_at, updated_at, started_at, finished_at,
       (destination_password IS NULL)::boolean AS destination_linked_to_source, credentials_changed_at
FROM accounts;
