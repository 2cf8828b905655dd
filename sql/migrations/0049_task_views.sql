-- What reading a task shows (GET /tasks, GET /tasks/{id}, an attempt's
-- task): the columns of its definition, state and login tests, without
-- the bookkeeping of admission and delivery (pending jobs, the webhook's
-- secret, the mail's recipients). The list reads every task at each
-- call, so it must not grow with columns it does not show.
CREATE VIEW task_views AS
SELECT id, name, source_endpoint_id, destination_endpoint_id, options, state,
       created_at, updated_at, started_at, finished_at, paused_at,
       tests_total, tests_done, tests_failed, tests_pending, tests_started_at,
       tests_source_ms, tests_destination_ms
FROM tasks;
