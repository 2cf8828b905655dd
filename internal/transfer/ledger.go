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
	// unwritten is the whole map of a folder copied in one window, kept
	// until the folder's state is stored with it in one write (save). Any
	// read of that folder's map writes it first (writeUnwritten).
	unwritten *folderMap
	// unreset is the reset of a folder that had no state at all as its
	// copy began (a first copy): it waits for the folder's first write and
	// goes with it, so that a folder copied in one window ends in one
	// write instead of two. Until then the folder's map is empty: no map
	// is ever stored before its folder's state. What waits (unreset,
	// unwritten) is always one folder's.
	unreset *folderReset
}

// folderMap is the whole of one folder's map.
type folderMap struct {
	folder  string
	entries []syncstate.Mapping
}

// folderReset is a folder's reset: no map, and st its state.
type folderReset struct {
	folder string
	st     syncstate.FolderState
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
// the next pass, with what waits for it (its whole map, its reset) in the
// same write.
func (l *syncLedger) save(ctx context.Context, folder string, st syncstate.FolderState) error {
	l.states[folder] = st
	mapWaits := l.unwritten != nil && l.unwritten.folder == folder
	resetWaits := l.unreset != nil && l.unreset.folder == folder
	if mapWaits || resetWaits {
		var entries []syncstate.Mapping // none, when only the reset waits
		if mapWaits {
			entries = l.unwritten.entries
		}
		// On failure what waits stays, for finish to write alone.
		if err := l.store.ReplaceFolder(ctx, folder, entries, st); err != nil {
			return fmt.Errorf("storing the sync state: %w", err)
		}
		l.unwritten, l.unreset = nil, nil
		return nil
	}
	if err := l.writeUnwritten(ctx); err != nil {
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
// folder's end follows at once. What waits for another folder is written
// first; a window's part goes after the folder's reset.
func (l *syncLedger) replaceMappings(ctx context.Context, folder string, from, to uint32, entries []syncstate.Mapping) error {
	if from <= 1 && to == syncstate.MaxUID {
		if err := l.writeOthers(ctx, folder); err != nil {
			return err
		}
		l.unwritten = &folderMap{folder: folder, entries: entries}
		return nil
	}
	if err := l.writeUnwritten(ctx); err != nil {
		return err
	}
	return l.store.ReplaceMappings(ctx, folder, from, to, entries)
}

// writeOthers writes what waits when it is another folder's than folder.
func (l *syncLedger) writeOthers(ctx context.Context, folder string) error {
	if (l.unreset != nil && l.unreset.folder != folder) || (l.unwritten != nil && l.unwritten.folder != folder) {
		return l.writeUnwritten(ctx)
	}
	return nil
}

// writeWaitingOf writes what waits when it is folder's, so that a read of
// folder's map finds it; another folder's may wait on.
func (l *syncLedger) writeWaitingOf(ctx context.Context, folder string) error {
	if (l.unreset != nil && l.unreset.folder == folder) || (l.unwritten != nil && l.unwritten.folder == folder) {
		return l.writeUnwritten(ctx)
	}
	return nil
}

// writeUnwritten writes what waits, alone: a folder's reset, then its
// whole map; before a read of that folder's map, before another folder's
// writes, and when the folder ends without its state stored.
func (l *syncLedger) writeUnwritten(ctx context.Context) error {
	if r := l.unreset; r != nil {
		if err := l.store.ResetFolders(ctx, map[string]syncstate.FolderState{r.folder: r.st}); err != nil {
			return err
		}
		l.unreset = nil
	}
	m := l.unwritten
	if m == nil {
		return nil
	}
	if err := l.store.ReplaceMappings(ctx, m.folder, 1, syncstate.MaxUID, m.entries); err != nil {
		return err
	}
	l.unwritten = nil
	return nil
}

// mapEmpty reports whether folder's map is known to be empty without a
// read: its reset waits, and no map of it does.
func (l *syncLedger) mapEmpty(folder string) bool {
	return l.unreset != nil && l.unreset.folder == folder && l.unwritten == nil
}

// mappings returns folder's map entries with from ≤ Source ≤ to, as
// stored.
func (l *syncLedger) mappings(ctx context.Context, folder string, from, to uint32) ([]syncstate.Mapping, error) {
	if l.mapEmpty(folder) {
		return nil, nil
	}
	if err := l.writeWaitingOf(ctx, folder); err != nil {
		return nil, err
	}
	return l.store.Mappings(ctx, folder, from, to)
}

// mappedDestinations returns the destination UIDs of folder's entries
// that are at least atLeast, as stored.
func (l *syncLedger) mappedDestinations(ctx context.Context, folder string, atLeast uint32) ([]uint32, error) {
	if l.mapEmpty(folder) {
		return nil, nil
	}
	if err := l.writeWaitingOf(ctx, folder); err != nil {
		return nil, err
	}
	return l.store.MappedDestinations(ctx, folder, atLeast)
}

// reset drops a folder's map and stores its new state. For a folder with
// no state at all, stored or made by this attempt, both wait for the
// folder's first write (unreset): it has no map to drop.
func (l *syncLedger) reset(ctx context.Context, folder string, st syncstate.FolderState) error {
	_, known := l.states[folder]
	l.states[folder] = st
	if err := l.writeUnwritten(ctx); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	if !known {
		l.unreset = &folderReset{folder: folder, st: st}
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
	if err := l.writeUnwritten(ctx); err != nil {
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
