package transfer

import (
	"context"
	"fmt"
	"maps"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// syncLedger is an attempt's account of the folders' sync states: as the
// last attempt left them, as this one changes them, and the store that
// keeps them. A state counts for this job only when it was made between
// the same two mailboxes (servers) and, for the decision to compare
// again, with the same options (filter).
type syncLedger struct {
	store   syncstate.StateStore
	states  map[string]syncstate.FolderState // by source folder
	servers string                           // FolderState.Servers of this job
	filter  string                           // FolderState.Filter of its options (Options.filterKey)
	// emptied are the states of folders found empty on both sides, not
	// stored yet: all are stored in one statement once the folders are
	// gone through, or a try fails (storeEmptied). One lost with its
	// attempt only has its empty folder looked at again.
	emptied map[string]syncstate.FolderState
	// waiting is what one folder's writes keep back for its end, to go
	// with its state in one statement (save).
	waiting *folderWrites
}

// folderWrites are the writes one folder keeps back until its state is
// stored, each making one statement fewer:
//   - the reset of a folder that had no state at all as its copy began (a
//     first copy). It has no map, since no map is ever stored before its
//     folder's state, so until its first write the map reads empty;
//   - the whole map of a folder copied in one window.
//
// A read of the folder's map, another folder's write, or the folder ending
// without its state writes them first, alone (writeWaiting).
type folderWrites struct {
	folder string
	reset  *syncstate.FolderState // the state its reset stores; nil: no reset waits
	whole  *[]syncstate.Mapping   // its whole map; nil: none waits
}

// readLedger reads the sync state job's last attempt left (in memory when
// the job has no store).
func readLedger(ctx context.Context, job *Job) (*syncLedger, error) {
	l := &syncLedger{store: job.State, emptied: map[string]syncstate.FolderState{},
		servers: sideKey(&job.Source) + " → " + sideKey(&job.Destination), filter: job.Options.filterKey()}
	if l.store == nil {
		l.store = syncstate.NewMemoryState()
	}
	states, err := l.store.FolderStates(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the sync state: %w", err)
	}
	l.states = states
	return l, nil
}

// sideKey names the mailbox a side is: server and login.
func sideKey(s *imapconn.Side) string { return s.Address() + "/" + s.Login }

// ours returns a folder's state, and whether this job's two mailboxes
// made it: a state of any other pair counts as none.
func (l *syncLedger) ours(folder string) (syncstate.FolderState, bool) {
	st, ok := l.states[folder]
	return st, ok && st.Servers == l.servers
}

// completedBefore reports whether a pass between these two mailboxes
// completed a folder before: without one, the source cannot be found
// unchanged, and both sides are opened at once (a first copy).
func (l *syncLedger) completedBefore() bool {
	for _, st := range l.states {
		if st.Complete && st.Servers == l.servers {
			return true
		}
	}
	return false
}

// previousDestinations returns where each source folder went at the last
// pass, with the same servers: the plan keeps it there.
func (l *syncLedger) previousDestinations() map[string]string {
	prev := map[string]string{}
	for folder, st := range l.states {
		if st.Servers == l.servers {
			prev[folder] = st.Destination
		}
	}
	return prev
}

// save stores a folder's state, for this attempt's later tries and for
// the next pass, with what waits for it (its reset, its whole map) in the
// same write.
func (l *syncLedger) save(ctx context.Context, folder string, st syncstate.FolderState) error {
	l.states[folder] = st
	if w := l.waitingFor(folder); w != nil {
		var entries []syncstate.Mapping // none, when only the reset waits
		if w.whole != nil {
			entries = *w.whole
		}
		// On failure what waits stays, for finish to write alone.
		if err := l.store.ReplaceFolder(ctx, folder, entries, st); err != nil {
			return fmt.Errorf("storing the sync state: %w", err)
		}
		l.waiting = nil
		return nil
	}
	if err := l.writeWaiting(ctx); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	if err := l.store.SetFolderState(ctx, folder, st); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	return nil
}

// replaceMappings stores folder's entries with from ≤ Source ≤ to. When
// they are the folder's whole map (a folder copied in one window), they
// wait for the folder's state, to go with it in one write (save): the
// folder's end follows at once. A window's part goes after what waits.
func (l *syncLedger) replaceMappings(ctx context.Context, folder string, from, to uint32, entries []syncstate.Mapping) error {
	if from > 1 || to != syncstate.MaxUID {
		if err := l.writeWaiting(ctx); err != nil {
			return err
		}
		return l.store.ReplaceMappings(ctx, folder, from, to, entries)
	}
	w := l.waitingFor(folder)
	if w == nil {
		if err := l.writeWaiting(ctx); err != nil { // another folder's
			return err
		}
		w = &folderWrites{folder: folder}
		l.waiting = w
	}
	w.whole = &entries
	return nil
}

// waitingFor returns what waits for folder; nil when nothing does.
func (l *syncLedger) waitingFor(folder string) *folderWrites {
	if l.waiting != nil && l.waiting.folder == folder {
		return l.waiting
	}
	return nil
}

// writeWaiting writes what waits, alone: the reset, then the whole map.
func (l *syncLedger) writeWaiting(ctx context.Context) error {
	w := l.waiting
	if w == nil {
		return nil
	}
	if w.reset != nil {
		if err := l.store.ResetFolders(ctx, map[string]syncstate.FolderState{w.folder: *w.reset}); err != nil {
			return err
		}
		w.reset = nil
	}
	if w.whole != nil {
		if err := l.store.ReplaceMappings(ctx, w.folder, 1, syncstate.MaxUID, *w.whole); err != nil {
			return err
		}
	}
	l.waiting = nil
	return nil
}

// readable makes folder's stored map current for a read, and reports
// whether there is anything to read: a folder whose reset alone waits
// has an empty map. Another folder's writes may wait on.
func (l *syncLedger) readable(ctx context.Context, folder string) (bool, error) {
	w := l.waitingFor(folder)
	if w == nil {
		return true, nil
	}
	if w.whole == nil {
		return false, nil
	}
	return true, l.writeWaiting(ctx)
}

// mappings returns folder's map entries with from ≤ Source ≤ to, as
// stored.
func (l *syncLedger) mappings(ctx context.Context, folder string, from, to uint32) ([]syncstate.Mapping, error) {
	if ok, err := l.readable(ctx, folder); !ok || err != nil {
		return nil, err
	}
	return l.store.Mappings(ctx, folder, from, to)
}

// mappedDestinations returns the destination UIDs of folder's entries
// that are at least atLeast, as stored.
func (l *syncLedger) mappedDestinations(ctx context.Context, folder string, atLeast uint32) ([]uint32, error) {
	if ok, err := l.readable(ctx, folder); !ok || err != nil {
		return nil, err
	}
	return l.store.MappedDestinations(ctx, folder, atLeast)
}

// reset drops a folder's map and stores its new state. For a folder with
// no state at all, stored or made by this attempt, both wait for the
// folder's first write: it has no map to drop.
func (l *syncLedger) reset(ctx context.Context, folder string, st syncstate.FolderState) error {
	_, known := l.states[folder]
	l.states[folder] = st
	if err := l.writeWaiting(ctx); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	if !known {
		l.waiting = &folderWrites{folder: folder, reset: &st}
		return nil
	}
	if err := l.store.ResetFolders(ctx, map[string]syncstate.FolderState{folder: st}); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	return nil
}

// recordEmptied notes that a folder pair is empty on both sides, to store
// with the others (storeEmptied): a hosted mailbox has several such
// (Drafts, Junk, Trash), and a statement each made most of a small
// account's sync-state statements on its first copy.
func (l *syncLedger) recordEmptied(folder string, st syncstate.FolderState) {
	l.states[folder] = st
	l.emptied[folder] = st
}

// storeEmptied drops the maps of the folders found empty and stores their
// states, at once.
func (l *syncLedger) storeEmptied(ctx context.Context) error {
	if len(l.emptied) == 0 {
		return nil
	}
	if err := l.writeWaiting(ctx); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	if err := l.store.ResetFolders(ctx, l.emptied); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	clear(l.emptied)
	return nil
}

// scriptStates is what earlier passes put of each script between these
// servers; a record of other servers is none.
func (l *syncLedger) scriptStates(ctx context.Context) (map[string]syncstate.ScriptState, error) {
	states, err := l.store.ScriptStates(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the scripts' sync state: %w", err)
	}
	maps.DeleteFunc(states, func(_ string, st syncstate.ScriptState) bool { return st.Servers != l.servers })
	return states, nil
}
