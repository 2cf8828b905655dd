-- An account run again in the pass under way (a retry that joins it)
-- starts its figures from zero, as every run does; what its earlier runs
-- in the pass copied is kept aside here when it is queued, so that the
-- pass's record and live figures, and with them the task's totals to date,
-- count every run of the pass, not only the last.
ALTER TABLE accounts
    ADD COLUMN pass_copied_before bigint NOT NULL DEFAULT 0,
    ADD COLUMN pass_bytes_before bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE VIEW pass_figures AS
SELECT task_id, run_pass AS pass,
       count(*) FILTER (WHERE state = 'completed')::int AS accounts_completed,
       count(*) FILTER (WHERE state = 'completed_with_errors')::int AS accounts_with_errors,
       count(*) FILTER (WHERE state = 'failed')::int AS accounts_failed,
       count(*) FILTER (WHERE state = 'canceled')::int AS accounts_canceled,
       coalesce(sum(messages_copied + pass_copied_before), 0)::bigint AS messages_copied,
       coalesce(sum(messages_skipped), 0)::bigint AS messages_skipped,
       coalesce(sum(messages_failed), 0)::bigint AS messages_failed,
       coalesce(sum(bytes_copied + pass_bytes_before), 0)::bigint AS bytes_copied,
       coalesce(sum(source_messages), 0)::bigint AS source_messages,
       coalesce(sum(source_bytes), 0)::bigint AS source_bytes,
       count(*) FILTER (WHERE source_messages IS NULL)::int AS accounts_uncounted
FROM accounts WHERE run_pass IS NOT NULL
GROUP BY task_id, run_pass;
