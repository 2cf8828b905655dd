-- How many accounts of a task run (or are tested) at once, read from its
-- options in one place: the queries that need it call this instead of
-- each spelling the JSON path.
CREATE FUNCTION task_parallel_accounts(options jsonb, default_parallel int) RETURNS int
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce((options ->> 'parallel_accounts')::int, default_parallel)
$$;
