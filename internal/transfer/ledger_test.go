package transfer

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// TestLedgerCountsOnlyItsOwnMailboxes: a folder's state written between
// another pair of mailboxes (the task pointed at another server, or the
// account's login changed) is no state: it neither makes a source look
// unchanged, nor keeps a folder where that pass put it.
func TestLedgerCountsOnlyItsOwnMailboxes(t *testing.T) {
	job := Job{Source: imapconn.Side{Server: imapconn.Server{Host: "old.example", Port: 143}, Login: "ann"},
		Destination: imapconn.Side{Server: imapconn.Server{Host: "new.example", Port: 143}, Login: "ann"}, State: syncstate.NewMemoryState()}
	ours := sideKey(&job.Source) + " → " + sideKey(&job.Destination)
	theirs := sideKey(&job.Source) + " → other.example:143/ann"
	for folder, st := range map[string]syncstate.FolderState{
		"INBOX":   {Servers: theirs, Destination: "INBOX", Complete: true},
		"Archive": {Servers: ours, Destination: "Archives"},
	} {
		if err := job.State.SetFolderState(t.Context(), folder, st); err != nil {
			t.Fatal(err)
		}
	}
	ledger, err := readLedger(t.Context(), &job)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ledger.ours("INBOX"); ok {
		t.Error("INBOX's state from another destination counts as this job's")
	}
	if st, ok := ledger.ours("Archive"); !ok || st.Destination != "Archives" {
		t.Errorf("Archive's own state: %+v, %v", st, ok)
	}
	if ledger.completedBefore() {
		t.Error("a folder completed towards another destination makes a first copy look like a delta")
	}
	if got, want := ledger.previousDestinations(), map[string]string{"Archive": "Archives"}; !maps.Equal(got, want) {
		t.Errorf("previous destinations %v, want %v", got, want)
	}

	if err := ledger.save(t.Context(), "INBOX", syncstate.FolderState{Servers: ours, Destination: "INBOX", Complete: true}); err != nil {
		t.Fatal(err)
	}
	if !ledger.completedBefore() {
		t.Error("INBOX completed between these mailboxes, and the ledger does not say so")
	}
	again, err := readLedger(t.Context(), &job)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := again.ours("INBOX"); !ok || !st.Complete {
		t.Errorf("the saved state did not reach the store: %+v, %v", st, ok)
	}
}

// writesLog records the writes a StateStore is asked for.
type writesLog struct {
	syncstate.StateStore
	writes []string
}

func (w *writesLog) SetFolderState(ctx context.Context, folder string, st syncstate.FolderState) error {
	w.writes = append(w.writes, "state "+folder)
	return w.StateStore.SetFolderState(ctx, folder, st)
}

func (w *writesLog) ReplaceMappings(ctx context.Context, folder string, from, to uint32, entries []syncstate.Mapping) error {
	w.writes = append(w.writes, "map "+folder)
	return w.StateStore.ReplaceMappings(ctx, folder, from, to, entries)
}

func (w *writesLog) ReplaceFolder(ctx context.Context, folder string, entries []syncstate.Mapping, st syncstate.FolderState) error {
	w.writes = append(w.writes, "map and state "+folder)
	return w.StateStore.ReplaceFolder(ctx, folder, entries, st)
}

// ResetFolders is logged as "reset" and the folders, sorted.
func (w *writesLog) ResetFolders(ctx context.Context, states map[string]syncstate.FolderState) error {
	w.writes = append(w.writes, "reset "+strings.Join(slices.Sorted(maps.Keys(states)), ", "))
	return w.StateStore.ResetFolders(ctx, states)
}

// resets are the logged ResetFolders calls.
func (w *writesLog) resets() []string {
	var calls []string
	for _, write := range w.writes {
		if strings.HasPrefix(write, "reset ") {
			calls = append(calls, write)
		}
	}
	return calls
}

// TestAFolderOfOneWindowEndsInOneWrite: the map of a folder copied in one
// window waits for the folder's state and goes with it, in one write.
// It is never lost nor read stale meanwhile: a read of its map, another
// folder's write, or the folder ending without its state writes it first.
func TestAFolderOfOneWindowEndsInOneWrite(t *testing.T) {
	ctx := t.Context()
	copied := []syncstate.Mapping{{Source: 1, Destination: 7}, {Source: 2, Destination: 8}}

	t.Run("with its state", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		if err := ledger.replaceMappings(ctx, "INBOX", 1, syncstate.MaxUID, copied); err != nil {
			t.Fatal(err)
		}
		if err := ledger.save(ctx, "INBOX", syncstate.FolderState{Complete: true}); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "map and state INBOX")
		if got, _ := log.Mappings(ctx, "INBOX", 0, syncstate.MaxUID); !slices.EqualFunc(got, copied, mappingEqual) {
			t.Errorf("stored map %v, want %v", got, copied)
		}
	})
	t.Run("read before", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		if err := ledger.replaceMappings(ctx, "INBOX", 1, syncstate.MaxUID, copied); err != nil {
			t.Fatal(err)
		}
		got, err := ledger.mappings(ctx, "INBOX", 1, 1)
		if err != nil || len(got) != 1 || got[0].Destination != 7 {
			t.Errorf("read back %v, %v: the waiting map was not written first", got, err)
		}
		wantWrites(t, log, "map INBOX")
	})
	t.Run("another folder's write", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		if err := ledger.replaceMappings(ctx, "INBOX", 1, syncstate.MaxUID, copied); err != nil {
			t.Fatal(err)
		}
		if err := ledger.save(ctx, "Sent", syncstate.FolderState{}); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "map INBOX", "state Sent")
	})
	t.Run("the folder ends without its state", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		if err := ledger.replaceMappings(ctx, "INBOX", 1, syncstate.MaxUID, copied); err != nil {
			t.Fatal(err)
		}
		if err := ledger.writeWaiting(ctx); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "map INBOX")
	})
	t.Run("its state refused", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		ledger.store = stateWritesRefused{log}
		if err := ledger.replaceMappings(ctx, "INBOX", 1, syncstate.MaxUID, copied); err != nil {
			t.Fatal(err)
		}
		if err := ledger.save(ctx, "INBOX", syncstate.FolderState{}); !errors.Is(err, errStateWrite) {
			t.Fatalf("saving with the state refused: %v", err)
		}
		if err := ledger.writeWaiting(ctx); err != nil { // as the folder's end does
			t.Fatal(err)
		}
		wantWrites(t, log, "map INBOX")
	})
	t.Run("a window of many", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		if err := ledger.replaceMappings(ctx, "INBOX", 1, 2, copied); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "map INBOX")
	})
}

// TestAFirstCopysResetGoesWithTheFolder: a folder without any state has
// no map, so its reset waits and goes with the folder's first write: a
// folder copied in one window on a first copy costs one write, not two.
// A map is still never stored before its folder's state, its map reads
// empty meanwhile without a read, and a folder with a state, even
// another pair's, is reset at once.
func TestAFirstCopysResetGoesWithTheFolder(t *testing.T) {
	ctx := t.Context()
	copied := []syncstate.Mapping{{Source: 1, Destination: 7}, {Source: 2, Destination: 8}}
	begun := syncstate.FolderState{Servers: "a → b", ForeignBelow: 1}
	done := syncstate.FolderState{Servers: "a → b", ForeignBelow: 9, Complete: true}
	wantStored := func(t *testing.T, log *writesLog, st syncstate.FolderState, entries []syncstate.Mapping) {
		t.Helper()
		states, err := log.FolderStates(ctx)
		if err != nil || !reflect.DeepEqual(states["INBOX"], st) {
			t.Errorf("stored state %+v (%v), want %+v", states["INBOX"], err, st)
		}
		if got, _ := log.Mappings(ctx, "INBOX", 0, syncstate.MaxUID); !slices.EqualFunc(got, entries, mappingEqual) {
			t.Errorf("stored map %v, want %v", got, entries)
		}
	}
	reset := func(t *testing.T, ledger *syncLedger) {
		t.Helper()
		if err := ledger.reset(ctx, "INBOX", begun); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("one window", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		reset(t, ledger)
		if got, err := ledger.mappings(ctx, "INBOX", 1, syncstate.MaxUID); err != nil || len(got) != 0 {
			t.Errorf("the map of a folder without a state read %v, %v; want none", got, err)
		}
		if got, err := ledger.mappedDestinations(ctx, "INBOX", 1); err != nil || len(got) != 0 {
			t.Errorf("the mapped destinations of a folder without a state read %v, %v; want none", got, err)
		}
		if err := ledger.replaceMappings(ctx, "INBOX", 1, syncstate.MaxUID, copied); err != nil {
			t.Fatal(err)
		}
		if err := ledger.save(ctx, "INBOX", done); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "map and state INBOX")
		wantStored(t, log, done, copied)
	})
	t.Run("nothing copied", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		reset(t, ledger)
		if err := ledger.save(ctx, "INBOX", done); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "map and state INBOX")
		wantStored(t, log, done, nil)
	})
	t.Run("many windows", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		reset(t, ledger)
		if err := ledger.replaceMappings(ctx, "INBOX", 1, 2, copied); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "reset INBOX", "map INBOX")
		wantStored(t, log, begun, copied)
	})
	t.Run("the folder ends without its state", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		reset(t, ledger)
		if err := ledger.replaceMappings(ctx, "INBOX", 1, syncstate.MaxUID, copied); err != nil {
			t.Fatal(err)
		}
		if err := ledger.writeWaiting(ctx); err != nil { // as the folder's end does
			t.Fatal(err)
		}
		wantWrites(t, log, "reset INBOX", "map INBOX")
		wantStored(t, log, begun, copied)
	})
	t.Run("another folder", func(t *testing.T) {
		ledger, log := loggedLedger(t, nil)
		reset(t, ledger)
		if _, err := ledger.mappings(ctx, "Sent", 1, syncstate.MaxUID); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log) // another folder's read needs nothing of INBOX
		if err := ledger.save(ctx, "Sent", done); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, log, "reset INBOX", "state Sent")
	})
	t.Run("a state of another pair", func(t *testing.T) {
		ledger, log := loggedLedger(t, map[string]syncstate.FolderState{"INBOX": {Servers: "c → d", Complete: true}})
		reset(t, ledger)
		wantWrites(t, log, "reset INBOX")
	})
}

// loggedLedger reads a ledger from a memory state holding stored, whose
// writes from then on are logged.
func loggedLedger(t *testing.T, stored map[string]syncstate.FolderState) (*syncLedger, *writesLog) {
	t.Helper()
	memory := syncstate.NewMemoryState()
	for folder, st := range stored {
		if err := memory.SetFolderState(t.Context(), folder, st); err != nil {
			t.Fatal(err)
		}
	}
	log := &writesLog{StateStore: memory}
	ledger, err := readLedger(t.Context(), &Job{State: log})
	if err != nil {
		t.Fatal(err)
	}
	return ledger, log
}

// wantWrites checks the writes logged, in order.
func wantWrites(t *testing.T, log *writesLog, want ...string) {
	t.Helper()
	if !slices.Equal(log.writes, want) {
		t.Errorf("writes %q, want %q", log.writes, want)
	}
}

func mappingEqual(a, b syncstate.Mapping) bool {
	return a.Source == b.Source && a.Destination == b.Destination
}
