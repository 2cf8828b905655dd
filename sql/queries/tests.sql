-- Connection tests (see migrations/0008_connection_tests.sql). Every query
-- here runs in a transaction that took EventsLock first.

-- name: AccountsTestQueue :execrows
-- The accounts of the task that the filter selects (see account_selected)
-- wait for their test, under a new generation; accounts in a pass are left
-- out.
UPDATE accounts SET test_state = 'waiting', test_generation = test_generation + 1
WHERE task_id = @task_id AND state NOT IN ('queued', 'running')
  AND account_selected(id, state, source_login, destination_login, source_test_ok, destination_test_ok,
                       @ids::bigint[], @states::text[], @search::text, @login_test::text);

-- name: AccountsTestNext :many
-- Queues the task's next count waiting tests.
UPDATE accounts SET test_state = 'queued'
WHERE id IN (
    SELECT w.id FROM accounts w WHERE w.task_id = @task_id AND w.test_state = 'waiting'
    ORDER BY w.id LIMIT @count::int FOR UPDATE)
RETURNING id, test_generation;

-- name: AccountTestEnd :execrows
-- Ends the queued test of a generation; no row for an outcome that came
-- too late (canceled, or a newer test began).
UPDATE accounts SET test_state = NULL
WHERE task_id = @task_id AND id = @id AND test_generation = @test_generation AND test_state = 'queued';

-- name: AccountsTestCancelWaiting :execrows
-- A cancel drops the tests not queued yet.
UPDATE accounts SET test_state = NULL WHERE task_id = @task_id AND test_state = 'waiting';

-- name: TaskTestCounted :exec
UPDATE tasks
SET tests_done = tests_done + 1, tests_failed = tests_failed + CASE WHEN @failed::bool THEN 1 ELSE 0 END,
    tests_source_ms = tests_source_ms + @source_ms::bigint,
    tests_destination_ms = tests_destination_ms + @destination_ms::bigint
WHERE id = @id;

-- name: TaskTestsAlongside :one
-- A test of some accounts begins, whatever the task does: the task's
-- state stays, the test's jobs are counted apart. No row: another test is
-- under way.
UPDATE tasks SET tests_total = @total::int, tests_done = 0, tests_failed = 0, tests_pending = @total::int,
    tests_source_ms = 0, tests_destination_ms = 0, tests_started_at = now()
WHERE id = @id AND tests_pending = 0
RETURNING task_parallel_accounts(options, @default_parallel::int)::int AS parallel_accounts;

-- name: TaskTestsAlongsideEnded :one
-- jobs tests alongside a pass ended; returns how many remain. No row: the
-- task's test is not one alongside a pass.
UPDATE tasks SET tests_pending = greatest(tests_pending - @jobs::int, 0)
WHERE id = @id AND tests_pending > 0
RETURNING tests_pending;

-- name: TaskTestsPending :one
SELECT tests_pending FROM tasks WHERE id = @id;
