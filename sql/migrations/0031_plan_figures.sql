-- A task's plan is read a page at a time with its sums: each plan's
-- figures and problem count are columns, so that the sums and the filters
-- do not read every plan's folders (migration 0028 kept them in the JSON
-- only, and the task's plan was read whole, thousands of plans at each
-- refresh of the task's page).
ALTER TABLE account_plans
    ADD COLUMN folders         int    NOT NULL DEFAULT 0,
    ADD COLUMN source_messages bigint NOT NULL DEFAULT 0,
    ADD COLUMN source_bytes    bigint NOT NULL DEFAULT 0,
    ADD COLUMN to_copy_bytes   bigint NOT NULL DEFAULT 0,
    ADD COLUMN quota_free      bigint NOT NULL DEFAULT -1,
    ADD COLUMN problems        int    NOT NULL DEFAULT 0;

UPDATE account_plans
SET folders = jsonb_array_length(coalesce(plan -> 'folders', '[]')),
    source_messages = coalesce((plan ->> 'source_messages')::bigint, 0),
    source_bytes = coalesce((plan ->> 'source_bytes')::bigint, 0),
    to_copy_bytes = coalesce((plan ->> 'to_copy_bytes')::bigint, 0),
    quota_free = coalesce((plan ->> 'quota_free')::bigint, -1),
    problems = jsonb_array_length(coalesce(plan -> 'problems', '[]'))
WHERE plan IS NOT NULL;

-- Pages go in account id order within a task.
DROP INDEX account_plans_task;
CREATE INDEX account_plans_task ON account_plans (task_id, account_id);
