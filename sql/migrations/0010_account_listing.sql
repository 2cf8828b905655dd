-- Account listing (GET /tasks/{id}/accounts): which accounts a filter
-- selects, written once for the page and for its count.

-- account_selected: in one of states (none: any), and with search (''
-- : any) in either login, in any case.
CREATE FUNCTION account_selected(state text, source_login text, destination_login text, states text[], search text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (cardinality(states) = 0 OR state = ANY (states))
       AND (search = '' OR strpos(lower(source_login), lower(search)) > 0
                        OR strpos(lower(destination_login), lower(search)) > 0)
$$;

