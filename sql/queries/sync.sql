-- name: SyncFolderList :many
SELECT folder, state FROM sync_folders WHERE account_id = @account_id ORDER BY folder;

-- name: SyncFolderSet :exec
INSERT INTO sync_folders (account_id, folder, state) VALUES (@account_id, @folder, @state)
ON CONFLICT (account_id, folder) DO UPDATE SET state = excluded.state;

-- name: SyncFoldersReset :exec
-- Drops the maps of folders and stores their new states in one statement.
WITH dropped AS (
    DELETE FROM sync_map_chunks WHERE account_id = @account_id AND folder = ANY (@folders::text[])
)
INSERT INTO sync_folders (account_id, folder, state)
SELECT @account_id, unnest(@folders::text[]), unnest(@states::text[])::jsonb
ON CONFLICT (account_id, folder) DO UPDATE SET state = excluded.state;

-- name: SyncFolderReplace :exec
-- Replaces all of a folder's chunks by the given ones and, when a state is
-- given, stores the folder's state, in one statement: the old chunks whose
-- place no new one takes are deleted, the others overwritten (the parts
-- touch different rows). A folder copied in one window ends in this write.
WITH dropped AS (
    DELETE FROM sync_map_chunks
    WHERE account_id = @account_id AND folder = @folder
      AND NOT first_source = ANY (@first_sources::bigint[])
), chunks AS (
    INSERT INTO sync_map_chunks (account_id, folder, first_source, last_source, max_destination, entries)
    SELECT @account_id, @folder, unnest(@first_sources::bigint[]), unnest(@last_sources::bigint[]),
           unnest(@max_destinations::bigint[]), unnest(@entries::bytea[])
    ON CONFLICT (account_id, folder, first_source) DO UPDATE
    SET last_source = excluded.last_source, max_destination = excluded.max_destination, entries = excluded.entries
)
INSERT INTO sync_folders (account_id, folder, state)
SELECT @account_id, @folder, sqlc.narg(state)::jsonb WHERE sqlc.narg(state)::jsonb IS NOT NULL
ON CONFLICT (account_id, folder) DO UPDATE SET state = excluded.state;

-- name: SyncChunkListOverlapping :many
-- The chunks holding entries with from_uid ≤ source ≤ to_uid, locked
-- until the end of the transaction when there is one (a replacement).
SELECT first_source, last_source, entries FROM sync_map_chunks
WHERE account_id = @account_id AND folder = @folder
  AND first_source <= @to_uid::bigint AND last_source >= @from_uid::bigint
ORDER BY first_source
FOR UPDATE;

-- name: SyncChunkDeleteOverlapping :exec
DELETE FROM sync_map_chunks
WHERE account_id = @account_id AND folder = @folder
  AND first_source <= @to_uid::bigint AND last_source >= @from_uid::bigint;

-- name: SyncChunkInsert :exec
INSERT INTO sync_map_chunks (account_id, folder, first_source, last_source, max_destination, entries)
VALUES (@account_id, @folder, @first_source, @last_source, @max_destination, @entries);

-- name: SyncChunkListReaching :many
-- The chunks with a destination UID of at least at_least.
SELECT entries FROM sync_map_chunks
WHERE account_id = @account_id AND folder = @folder AND max_destination >= @at_least::bigint
ORDER BY first_source;

-- name: SyncScriptList :many
SELECT name, state FROM sync_scripts WHERE account_id = @account_id ORDER BY name;

-- name: SyncScriptSet :exec
INSERT INTO sync_scripts (account_id, name, state) VALUES (@account_id, @name, @state)
ON CONFLICT (account_id, name) DO UPDATE SET state = excluded.state;

-- name: TaskAlteredCopies :many
-- The copies each account's folders hold unlike their source message
-- (FolderState.Altered), for the report; accounts without any are left out.
SELECT sf.account_id, sum((sf.state->>'altered')::bigint)::bigint AS altered
FROM sync_folders sf JOIN accounts a ON a.id = sf.account_id
WHERE a.task_id = @task_id AND sf.state ? 'altered'
GROUP BY sf.account_id;
