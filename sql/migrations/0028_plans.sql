-- Plans (dry runs): what a run of each account would do, read from both
-- servers without copying. One per account, the newest; generation lets
-- only the job of the newest plan record it.
CREATE TABLE account_plans (
    account_id   bigint PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    task_id      bigint NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    generation   bigint NOT NULL DEFAULT 1,
    state        text   NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    blocking     boolean NOT NULL DEFAULT false,
    plan         jsonb,
    error        text   NOT NULL DEFAULT '',
    requested_at timestamptz NOT NULL DEFAULT now(),
    planned_at   timestamptz
);
CREATE INDEX account_plans_task ON account_plans (task_id);

-- plan_refused: the account's task refuses blocked accounts (its option
-- refuse_blocked) and the account's newest plan has a blocking problem.
CREATE FUNCTION plan_refused(task bigint, account bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM tasks t JOIN account_plans p ON p.task_id = t.id
                   WHERE t.id = task AND p.account_id = account AND p.blocking
                     AND coalesce((t.options ->> 'refuse_blocked')::boolean, false))
$$;
