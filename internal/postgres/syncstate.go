package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// SyncState returns the copy engine's sync state of an account, kept in
// sync_folders, sync_map_chunks and sync_scripts.
func (s *Store) SyncState(accountID int64) syncstate.StateStore {
	return &syncState{store: s, accountID: accountID}
}

// syncState is one account's syncstate.StateStore.
type syncState struct {
	store     *Store
	accountID int64
}

var _ syncstate.StateStore = (*syncState)(nil)

// FolderStates implements syncstate.StateStore.
func (st *syncState) FolderStates(ctx context.Context) (map[string]syncstate.FolderState, error) {
	rows, err := st.store.queries.SyncFolderList(ctx, st.accountID)
	if err != nil {
		return nil, fmt.Errorf("reading the sync state: %w", err)
	}
	out := make(map[string]syncstate.FolderState, len(rows))
	for _, row := range rows {
		var fs syncstate.FolderState
		// A state this version cannot read is no state: the folder is
		// reconciled by identity, which copies nothing twice.
		if json.Unmarshal(row.State, &fs) == nil {
			out[row.Folder] = fs
		}
	}
	return out, nil
}

// SetFolderState implements syncstate.StateStore.
func (st *syncState) SetFolderState(ctx context.Context, folder string, fs syncstate.FolderState) error {
	encoded, err := json.Marshal(fs)
	if err != nil {
		return err
	}
	return st.store.queries.SyncFolderSet(ctx, dbsqlc.SyncFolderSetParams{AccountID: st.accountID, Folder: folder, State: encoded})
}

// ResetFolders implements syncstate.StateStore, in one statement.
func (st *syncState) ResetFolders(ctx context.Context, states map[string]syncstate.FolderState) error {
	arg := dbsqlc.SyncFoldersResetParams{AccountID: st.accountID}
	for folder, fs := range states {
		encoded, err := json.Marshal(fs)
		if err != nil {
			return err
		}
		arg.Folders, arg.States = append(arg.Folders, folder), append(arg.States, string(encoded))
	}
	return st.store.queries.SyncFoldersReset(ctx, arg)
}

// Mappings implements syncstate.StateStore.
func (st *syncState) Mappings(ctx context.Context, folder string, from, to uint32) ([]syncstate.Mapping, error) {
	rows, err := st.store.queries.SyncChunkListOverlapping(ctx, dbsqlc.SyncChunkListOverlappingParams{
		AccountID: st.accountID, Folder: folder, FromUid: int64(from), ToUid: int64(to)})
	if err != nil {
		return nil, err
	}
	var out []syncstate.Mapping
	for _, row := range rows {
		entries, err := decodeChunk(row.Entries)
		if err != nil {
			return nil, fmt.Errorf("folder %q, UIDs from %d: %w", folder, row.FirstSource, err)
		}
		out = append(out, inRange(entries, from, to)...)
	}
	return out, nil
}

// ReplaceMappings implements syncstate.StateStore: the chunks that overlap
// the range are rewritten, with their entries outside it kept, in one
// transaction; a range that spans the folder (a folder copied in one
// window) in one statement.
func (st *syncState) ReplaceMappings(ctx context.Context, folder string, from, to uint32, entries []syncstate.Mapping) error {
	if from <= 1 && to == syncstate.MaxUID { // source UIDs start at 1
		return st.replaceFolder(ctx, folder, entries, nil)
	}
	return pgx.BeginFunc(ctx, st.store.pool, func(tx pgx.Tx) error {
		q := st.store.queries.WithTx(tx)
		span := dbsqlc.SyncChunkListOverlappingParams{AccountID: st.accountID, Folder: folder, FromUid: int64(from), ToUid: int64(to)}
		rows, err := q.SyncChunkListOverlapping(ctx, span)
		if err != nil {
			return err
		}
		var below, above []syncstate.Mapping
		for _, row := range rows {
			old, err := decodeChunk(row.Entries)
			if err != nil {
				return fmt.Errorf("folder %q, UIDs from %d: %w", folder, row.FirstSource, err)
			}
			if from > 0 {
				below = append(below, inRange(old, 0, from-1)...)
			}
			if to < syncstate.MaxUID {
				above = append(above, inRange(old, to+1, syncstate.MaxUID)...)
			}
		}
		if err := q.SyncChunkDeleteOverlapping(ctx, dbsqlc.SyncChunkDeleteOverlappingParams(span)); err != nil {
			return err
		}
		merged := slices.Concat(below, entries, above)
		for chunk := range slices.Chunk(merged, maxChunkEntries) {
			if err := insertChunk(ctx, q, st.accountID, folder, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReplaceFolder implements syncstate.StateStore, in one statement.
func (st *syncState) ReplaceFolder(ctx context.Context, folder string, entries []syncstate.Mapping, state syncstate.FolderState) error {
	encoded, err := json.Marshal(state)
	if err != nil {
		return err
	}
	return st.replaceFolder(ctx, folder, entries, encoded)
}

// replaceFolder makes entries the whole of folder's map and, unless it is
// nil, state (JSON) its state.
func (st *syncState) replaceFolder(ctx context.Context, folder string, entries []syncstate.Mapping, state []byte) error {
	arg := dbsqlc.SyncFolderReplaceParams{AccountID: st.accountID, Folder: folder, State: state,
		FirstSources: []int64{}, LastSources: []int64{}, MaxDestinations: []int64{}, Entries: [][]byte{}}
	for chunk := range slices.Chunk(entries, maxChunkEntries) {
		arg.FirstSources = append(arg.FirstSources, int64(chunk[0].Source))
		arg.LastSources = append(arg.LastSources, int64(chunk[len(chunk)-1].Source))
		arg.MaxDestinations = append(arg.MaxDestinations, int64(maxDestination(chunk)))
		arg.Entries = append(arg.Entries, encodeChunk(chunk))
	}
	return st.store.queries.SyncFolderReplace(ctx, arg)
}

func maxDestination(chunk []syncstate.Mapping) uint32 {
	var highest uint32
	for _, e := range chunk {
		highest = max(highest, e.Destination)
	}
	return highest
}

func insertChunk(ctx context.Context, q *dbsqlc.Queries, accountID int64, folder string, chunk []syncstate.Mapping) error {
	return q.SyncChunkInsert(ctx, dbsqlc.SyncChunkInsertParams{
		AccountID: accountID, Folder: folder,
		FirstSource: int64(chunk[0].Source), LastSource: int64(chunk[len(chunk)-1].Source),
		MaxDestination: int64(maxDestination(chunk)), Entries: encodeChunk(chunk),
	})
}

// MappedDestinations implements syncstate.StateStore.
func (st *syncState) MappedDestinations(ctx context.Context, folder string, atLeast uint32) ([]uint32, error) {
	rows, err := st.store.queries.SyncChunkListReaching(ctx, dbsqlc.SyncChunkListReachingParams{
		AccountID: st.accountID, Folder: folder, AtLeast: int64(atLeast)})
	if err != nil {
		return nil, err
	}
	var out []uint32
	for _, data := range rows {
		entries, err := decodeChunk(data)
		if err != nil {
			return nil, fmt.Errorf("folder %q: %w", folder, err)
		}
		for _, e := range entries {
			if e.Destination >= atLeast {
				out = append(out, e.Destination)
			}
		}
	}
	return out, nil
}

// inRange returns the entries (ordered by source UID) with from ≤ Source ≤ to.
func inRange(entries []syncstate.Mapping, from, to uint32) []syncstate.Mapping {
	bySource := func(e syncstate.Mapping, uid uint32) int { return cmp.Compare(e.Source, uid) }
	lo, _ := slices.BinarySearchFunc(entries, from, bySource)
	hi, found := slices.BinarySearchFunc(entries, to, bySource)
	if found {
		hi++
	}
	return entries[lo:max(lo, hi)]
}

// ScriptStates implements syncstate.StateStore.
func (st *syncState) ScriptStates(ctx context.Context) (map[string]syncstate.ScriptState, error) {
	rows, err := st.store.queries.SyncScriptList(ctx, st.accountID)
	if err != nil {
		return nil, fmt.Errorf("reading the scripts' sync state: %w", err)
	}
	out := make(map[string]syncstate.ScriptState, len(rows))
	for _, row := range rows {
		var ss syncstate.ScriptState
		// A state this version cannot read is no state: the script is
		// compared as on a first pass.
		if json.Unmarshal(row.State, &ss) == nil {
			out[row.Name] = ss
		}
	}
	return out, nil
}

// SetScriptState implements syncstate.StateStore.
func (st *syncState) SetScriptState(ctx context.Context, name string, ss syncstate.ScriptState) error {
	encoded, err := json.Marshal(ss)
	if err != nil {
		return err
	}
	return st.store.queries.SyncScriptSet(ctx, dbsqlc.SyncScriptSetParams{AccountID: st.accountID, Name: name, State: encoded})
}
