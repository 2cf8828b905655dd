package postgres_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

func addAccount(t testing.TB, store *postgres.Store) (task, account int64) {
	t.Helper()
	task = addTask(t, store)
	ids, err := store.AccountsAdd(context.Background(), task, []migration.AccountInput{
		{SourceLogin: "a", SourcePassword: "pw", DestinationLogin: "a", DestinationPassword: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	return task, ids[0]
}

// The store must answer as the engine's in-memory state does, whatever
// the windows: random replacements of UID ranges (splitting chunks,
// emptying ranges, reaching MaxUID, spanning the folder), whole folders
// replaced with their state (or emptied with it), and resets of one
// folder or two are applied to both and every read compared.
func TestSyncStateAnswersAsTheMemoryState(t *testing.T) {
	t.Parallel()
	store, _, _ := newStore(t)
	_, account := addAccount(t, store)
	ctx := context.Background()
	got, want := store.SyncState(account), syncstate.NewMemoryState()
	rng := rand.New(rand.NewPCG(1, 2))
	flagSets := [][]string{nil, {`\Seen`}, {`\Seen`, `\Answered`}, {`$Forwarded`, `\Flagged`}}
	folders := []string{"INBOX", "Sent/2024", "Entwürfe"}
	for round := range 60 {
		folder := folders[round%len(folders)]
		from := uint32(rng.IntN(20_000))
		to := from + uint32(rng.IntN(9_000))
		if round%7 == 0 {
			to = syncstate.MaxUID
		}
		if round%5 == 0 { // the whole folder, as one window copies it
			from, to = uint32(round%2), syncstate.MaxUID
		}
		var entries []syncstate.Mapping
		for uid := from; uid <= min(to, from+9_000); uid++ {
			if uid > 0 && rng.IntN(3) > 0 {
				entries = append(entries, syncstate.Mapping{Source: uid, Destination: uid*2 + uint32(round), Flags: flagSets[rng.IntN(len(flagSets))]})
			}
		}
		for _, s := range []syncstate.StateStore{got, want} {
			var err error
			if round%10 == 0 { // a folder copied in one window ends with its state
				whole := entries
				if round%20 == 0 { // a first copy's folder with nothing copied: its reset and state
					whole = nil
				}
				err = s.ReplaceFolder(ctx, folder, whole, syncstate.FolderState{Destination: folder, ForeignBelow: uint32(round), Complete: true})
			} else if round%13 == 12 { // every other reset takes the next folder along
				states := map[string]syncstate.FolderState{folder: {Destination: folder, ForeignBelow: uint32(round)}}
				if round%26 == 25 {
					next := folders[(round+1)%len(folders)]
					states[next] = syncstate.FolderState{Destination: next, Complete: true}
				}
				err = s.ResetFolders(ctx, states)
			} else {
				err = s.ReplaceMappings(ctx, folder, from, to, entries)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		lo := uint32(rng.IntN(25_000))
		hi := lo + uint32(rng.IntN(10_000))
		at := uint32(rng.IntN(40_000))
		for name, read := range map[string]func(syncstate.StateStore) (any, error){
			"Mappings":     func(s syncstate.StateStore) (any, error) { return s.Mappings(ctx, folder, lo, hi) },
			"all Mappings": func(s syncstate.StateStore) (any, error) { return s.Mappings(ctx, folder, 0, syncstate.MaxUID) },
			"MappedDestinations": func(s syncstate.StateStore) (any, error) {
				return sortedDestinations(s.MappedDestinations(ctx, folder, at))
			},
			"FolderStates": func(s syncstate.StateStore) (any, error) { return s.FolderStates(ctx) },
		} {
			g, err := read(got)
			if err != nil {
				t.Fatal(err)
			}
			w, _ := read(want)
			if !reflect.DeepEqual(normalize(g), normalize(w)) {
				t.Fatalf("round %d, %s of %s: the store and the memory state differ", round, name, folder)
			}
		}
	}
}

func sortedDestinations(uids []uint32, err error) (any, error) {
	slices.Sort(uids)
	return uids, err
}

// normalize makes empty and nil slices, and nil and empty flag sets, alike.
func normalize(v any) any {
	switch v := v.(type) {
	case []syncstate.Mapping:
		out := []syncstate.Mapping{}
		for _, e := range v {
			if len(e.Flags) == 0 {
				e.Flags = nil
			}
			out = append(out, e)
		}
		return out
	case []uint32:
		return append([]uint32{}, v...)
	}
	return v
}

func TestSyncFolderStatesRoundTrip(t *testing.T) {
	t.Parallel()
	store, _, _ := newStore(t)
	_, account := addAccount(t, store)
	ctx := context.Background()
	st := store.SyncState(account)
	want := map[string]syncstate.FolderState{
		"INBOX": {Servers: "a → b", Destination: "INBOX", UIDValidity: 7, DestUIDValidity: 9, ForeignBelow: 31, Complete: true,
			Failures: []syncstate.MessageFailure{{UID: 12, Side: "destination", Reason: "NO [LIMIT] too big"}}},
		"Entwürfe": {Destination: "INBOX.Entwürfe", UIDValidity: 1},
	}
	for folder, fs := range want {
		if err := st.SetFolderState(ctx, folder, fs); err != nil {
			t.Fatal(err)
		}
	}
	inbox := want["INBOX"]
	inbox.Complete = false
	want["INBOX"] = inbox
	if err := st.SetFolderState(ctx, "INBOX", inbox); err != nil {
		t.Fatal(err)
	}
	got, err := st.FolderStates(ctx)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("folder states %+v, %v; want %+v", got, err, want)
	}
	other, err := store.SyncState(account + 1000).FolderStates(ctx)
	if err != nil || len(other) != 0 {
		t.Errorf("another account's states: %+v, %v", other, err)
	}
}

// TestSyncScriptStatesRoundTrip: what was put of each Sieve script is
// kept per account, replaced by a later record, and read back whole.
func TestSyncScriptStatesRoundTrip(t *testing.T) {
	t.Parallel()
	store, _, _ := newStore(t)
	_, account := addAccount(t, store)
	ctx := context.Background()
	st := store.SyncState(account)
	want := map[string]syncstate.ScriptState{
		"filters":  {Servers: "a → b", SHA256: "00ff", Active: true},
		"vacation": {Servers: "a → b", SHA256: "abcd"},
	}
	for name, ss := range want {
		if err := st.SetScriptState(ctx, name, ss); err != nil {
			t.Fatal(err)
		}
	}
	want["filters"] = syncstate.ScriptState{Servers: "a → b", SHA256: "0101"}
	if err := st.SetScriptState(ctx, "filters", want["filters"]); err != nil {
		t.Fatal(err)
	}
	got, err := st.ScriptStates(ctx)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("script states %+v, %v; want %+v", got, err, want)
	}
	memory := syncstate.NewMemoryState()
	for name, ss := range want {
		memory.SetScriptState(ctx, name, ss) //nolint:errcheck // in memory: cannot fail
	}
	if inMemory, _ := memory.ScriptStates(ctx); !reflect.DeepEqual(inMemory, got) {
		t.Errorf("the memory state holds %+v, PostgreSQL %+v", inMemory, got)
	}
	if other, err := store.SyncState(account + 1000).ScriptStates(ctx); err != nil || len(other) != 0 {
		t.Errorf("another account's script states: %+v, %v", other, err)
	}
}

// A folder of a million messages costs a few hundred rows of a few bytes
// an entry, and deleting the account deletes its state.
func TestSyncMapIsCompact(t *testing.T) {
	t.Parallel()
	store, pool, _ := newStore(t)
	task, account := addAccount(t, store)
	ctx := context.Background()
	st := store.SyncState(account)
	if err := st.SetFolderState(ctx, "INBOX", syncstate.FolderState{UIDValidity: 1}); err != nil {
		t.Fatal(err)
	}
	const messages, window = 1_000_000, 4096
	flags := [][]string{{`\Seen`}, {`\Seen`, `\Answered`}, nil}
	for from := uint32(1); from <= messages; from += window {
		entries := make([]syncstate.Mapping, 0, window)
		for uid := from; uid < from+window && uid <= messages; uid++ {
			entries = append(entries, syncstate.Mapping{Source: uid, Destination: uid + 3, Flags: flags[uid%7%3]})
		}
		to := from + window - 1
		if to >= messages {
			to = syncstate.MaxUID
		}
		if err := st.ReplaceMappings(ctx, "INBOX", from, to, entries); err != nil {
			t.Fatal(err)
		}
	}
	var rows, bytes int64
	if err := pool.QueryRow(ctx, "SELECT count(*), sum(length(entries)) FROM sync_map_chunks WHERE account_id = $1", account).Scan(&rows, &bytes); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages: %d rows, %d bytes (%.1f bytes a message)", messages, rows, bytes, float64(bytes)/messages)
	if rows > 300 || bytes > 4*messages {
		t.Errorf("%d rows and %d bytes for %d messages, want at most 300 rows and 4 bytes a message", rows, bytes, messages)
	}
	got, err := st.Mappings(ctx, "INBOX", 500_000, 500_009)
	if err != nil || len(got) != 10 || got[0].Source != 500_000 || got[9].Destination != 500_012 {
		t.Errorf("Mappings(500000, 500009) = %+v, %v", got, err)
	}
	if err := store.AccountDelete(ctx, task, account); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM sync_map_chunks) + (SELECT count(*) FROM sync_folders) ").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("%d rows of sync state left after the account's deletion, %v", rows, err)
	}
}

// TestAccountFoldersFromTheSyncState: an account's page lists its folders
// as the sync state has them, by source name, with the refused messages
// and the server's words.
func TestAccountFoldersFromTheSyncState(t *testing.T) {
	t.Parallel()
	store, _, _ := newStore(t)
	_, account := addAccount(t, store)
	ctx := context.Background()
	st := store.SyncState(account)
	for folder, fs := range map[string]syncstate.FolderState{
		"Sent Items": {Destination: "INBOX.Sent", SourceMessages: 5, DestMessages: 5, Covered: 5, SourceBytes: 4096, Complete: true},
		"INBOX": {Destination: "INBOX", SourceMessages: 9, DestMessages: 8, Covered: 8,
			Failures:        []syncstate.MessageFailure{{UID: 12, Side: "destination", Reason: "NO [LIMIT] too big"}},
			DroppedKeywords: []string{"$Label1"}},
	} {
		if err := st.SetFolderState(ctx, folder, fs); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.AccountFolders(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	want := []migration.FolderRecord{
		{Source: "INBOX", Destination: "INBOX", SourceMessages: 9, DestinationMessages: 8, Verified: 8,
			Refusals: []migration.Refusal{{UID: 12, Side: "destination", Reason: "NO [LIMIT] too big"}}, DroppedKeywords: []string{"$Label1"}},
		{Source: "Sent Items", Destination: "INBOX.Sent", SourceMessages: 5, DestinationMessages: 5, Verified: 5, SourceBytes: 4096, Complete: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("folders\n got %+v\nwant %+v", got, want)
	}
}
