package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
)

// SyncState returns the copy engine's sync state of an account, kept in
// sync_folders and sync_map_chunks.
func (s *Store) SyncState(accountID int64) transfer.StateStore {
	return &syncState{store: s, accountID: accountID}
}

// syncState is one account's transfer.StateStore.
type syncState struct {
	store     *Store
	accountID int64
}

var _ transfer.StateStore = (*syncState)(nil)

// FolderStates implements transfer.StateStore.
func (st *syncState) FolderStates(ctx context.Context) (map[string]transfer.FolderState, error) {
	rows, err := st.store.queries.SyncFolderList(ctx, st.accountID)
	if err != nil {
		return nil, fmt.Errorf("reading the sync state: %w", err)
	}
	out := make(map[string]transfer.FolderState, len(rows))
	for _, row := range rows {
		var fs transfer.FolderState
		// A state this version cannot read is no state: the folder is
		// reconciled by identity, which copies nothing twice.
		if json.Unmarshal(row.State, &fs) == nil {
			out[row.Folder] = fs
		}
	}
	return out, nil
}

// SetFolderState implements transfer.StateStore.
func (st *syncState) SetFolderState(ctx context.Context, folder string, fs transfer.FolderState) error {
	encoded, err := json.Marshal(fs)
	if err != nil {
		return err
	}
	return st.store.queries.SyncFolderSet(ctx, dbsqlc.SyncFolderSetParams{AccountID: st.accountID, Folder: folder, State: encoded})
}

// Mappings implements transfer.StateStore.
func (st *syncState) Mappings(ctx context.Context, folder string, from, to uint32) ([]transfer.Mapping, error) {
	rows, err := st.store.queries.SyncChunkListOverlapping(ctx, dbsqlc.SyncChunkListOverlappingParams{
		AccountID: st.accountID, Folder: folder, FromUid: int64(from), ToUid: int64(to)})
	if err != nil {
		return nil, err
	}
	var out []transfer.Mapping
	for _, row := range rows {
		entries, err := decodeChunk(row.Entries)
		if err != nil {
			return nil, fmt.Errorf("folder %q, UIDs from %d: %w", folder, row.FirstSource, err)
		}
		out = append(out, inRange(entries, from, to)...)
	}
	return out, nil
}

// ReplaceMappings implements transfer.StateStore: the chunks that overlap
// the range are rewritten, with their entries outside it kept, in one
// transaction.
func (st *syncState) ReplaceMappings(ctx context.Context, folder string, from, to uint32, entries []transfer.Mapping) error {
	return pgx.BeginFunc(ctx, st.store.pool, func(tx pgx.Tx) error {
		q := st.store.queries.WithTx(tx)
		span := dbsqlc.SyncChunkListOverlappingParams{AccountID: st.accountID, Folder: folder, FromUid: int64(from), ToUid: int64(to)}
		rows, err := q.SyncChunkListOverlapping(ctx, span)
		if err != nil {
			return err
		}
		var below, above []transfer.Mapping
		for _, row := range rows {
			old, err := decodeChunk(row.Entries)
			if err != nil {
				return fmt.Errorf("folder %q, UIDs from %d: %w", folder, row.FirstSource, err)
			}
			if from > 0 {
				below = append(below, inRange(old, 0, from-1)...)
			}
			if to < transfer.MaxUID {
				above = append(above, inRange(old, to+1, transfer.MaxUID)...)
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

func insertChunk(ctx context.Context, q *dbsqlc.Queries, accountID int64, folder string, chunk []transfer.Mapping) error {
	var maxDestination uint32
	for _, e := range chunk {
		maxDestination = max(maxDestination, e.Destination)
	}
	return q.SyncChunkInsert(ctx, dbsqlc.SyncChunkInsertParams{
		AccountID: accountID, Folder: folder,
		FirstSource: int64(chunk[0].Source), LastSource: int64(chunk[len(chunk)-1].Source),
		MaxDestination: int64(maxDestination), Entries: encodeChunk(chunk),
	})
}

// MappedDestinations implements transfer.StateStore.
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
func inRange(entries []transfer.Mapping, from, to uint32) []transfer.Mapping {
	bySource := func(e transfer.Mapping, uid uint32) int { return cmp.Compare(e.Source, uid) }
	lo, _ := slices.BinarySearchFunc(entries, from, bySource)
	hi, found := slices.BinarySearchFunc(entries, to, bySource)
	if found {
		hi++
	}
	return entries[lo:max(lo, hi)]
}
