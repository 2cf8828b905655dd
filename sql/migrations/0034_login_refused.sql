-- The side whose server refused an account's login at its last run or
-- login test (authentication failed, or the OAuth 2.0 grant refused):
-- scheduled and final passes leave the account out, so that the service
-- does not feed a server's lock-out (fail2ban) pass after pass, until its
-- logins or secrets change, an endpoint of its task changes, or a person
-- runs it. '' when no login was refused.
ALTER TABLE accounts ADD COLUMN login_refused text NOT NULL DEFAULT ''
    CHECK (login_refused IN ('', 'source', 'destination'));

CREATE OR REPLACE VIEW account_views AS
SELECT id, task_id, source_login, destination_login, state,
       source_test_ok, source_test_error, source_tested_at,
       destination_test_ok, destination_test_error, destination_tested_at,
       folders_total, folders_done, messages_total, messages_copied,
       messages_skipped, messages_failed, bytes_copied, last_error,
       created_at, updated_at, started_at, finished_at,
       (destination_password IS NULL)::boolean AS destination_linked_to_source, credentials_changed_at,
       source_messages, source_bytes, paused_until, login_refused
FROM accounts;
