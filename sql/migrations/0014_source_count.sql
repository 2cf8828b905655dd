-- The source's size, counted before a run copies (transfer.countSource):
-- the total that progress, rates and the time left are measured against.
-- NULL: not counted yet. A run that fails before it counts keeps the last
-- count, so that a re-run has its total from the start.
ALTER TABLE accounts ADD COLUMN source_messages bigint;
ALTER TABLE accounts ADD COLUMN source_bytes bigint;

CREATE OR REPLACE VIEW account_views AS
SELECT id, task_id, source_login, destination_login, state,
       source_test_ok, source_test_error, source_tested_at,
       destination_test_ok, destination_test_error, destination_tested_at,
       folders_total, folders_done, messages_total, messages_copied,
       messages_skipped, messages_failed, bytes_copied, last_error,
       created_at, updated_at, started_at, finished_at,
       (destination_password IS NULL)::boolean AS destination_linked_to_source, credentials_changed_at,
       source_messages, source_bytes
FROM accounts;

-- A pass's total: its accounts' source counts, and how many have none yet.
ALTER TABLE task_runs ADD COLUMN source_messages bigint NOT NULL DEFAULT 0;
ALTER TABLE task_runs ADD COLUMN source_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE task_runs ADD COLUMN accounts_uncounted int NOT NULL DEFAULT 0;

CREATE OR REPLACE VIEW pass_figures AS
SELECT task_id, run_pass AS pass,
       count(*) FILTER (WHERE state = 'completed')::int AS accounts_completed,
       count(*) FILTER (WHERE state = 'completed_with_errors')::int AS accounts_with_errors,
       count(*) FILTER (WHERE state = 'failed')::int AS accounts_failed,
       count(*) FILTER (WHERE state = 'canceled')::int AS accounts_canceled,
       coalesce(sum(messages_copied), 0)::bigint AS messages_copied,
       coalesce(sum(messages_skipped), 0)::bigint AS messages_skipped,
       coalesce(sum(messages_failed), 0)::bigint AS messages_failed,
       coalesce(sum(bytes_copied), 0)::bigint AS bytes_copied,
       coalesce(sum(source_messages), 0)::bigint AS source_messages,
       coalesce(sum(source_bytes), 0)::bigint AS source_bytes,
       count(*) FILTER (WHERE source_messages IS NULL)::int AS accounts_uncounted
FROM accounts WHERE run_pass IS NOT NULL
GROUP BY task_id, run_pass;
