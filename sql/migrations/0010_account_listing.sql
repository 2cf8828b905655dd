-- Account selection: which accounts a listing (GET /tasks/{id}/accounts)
-- shows and a bulk action (run, test, delete) acts on, written once for
-- every query that selects.

-- account_selected: one of ids (none: any), in one of states (none: any), with search ('': any)
-- in either login, in any case, and with the login test login_test says
-- ('': any; 'passed': both sides worked; 'failed': a side failed;
-- 'untested': no side failed and a side is not tested).
CREATE FUNCTION account_selected(id bigint, state text, source_login text, destination_login text,
    source_test_ok boolean, destination_test_ok boolean,
    ids bigint[], states text[], search text, login_test text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (cardinality(ids) = 0 OR id = ANY (ids))
       AND (cardinality(states) = 0 OR state = ANY (states))
       AND (search = '' OR strpos(lower(source_login), lower(search)) > 0
                        OR strpos(lower(destination_login), lower(search)) > 0)
       AND CASE login_test
           WHEN '' THEN true
           WHEN 'passed' THEN coalesce(source_test_ok AND destination_test_ok, false)
           WHEN 'failed' THEN source_test_ok IS FALSE OR destination_test_ok IS FALSE
           WHEN 'untested' THEN source_test_ok IS NOT FALSE AND destination_test_ok IS NOT FALSE
                                AND (source_test_ok IS NULL OR destination_test_ok IS NULL)
           END
$$;
