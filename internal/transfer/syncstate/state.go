// Package syncstate is what the engine keeps of an account between
// passes: each source folder's state and its UID map, and StateStore, the
// interface that keeps them (the service's is in PostgreSQL). It holds
// data only, no IMAP, so that storage keeps it without the engine.
package syncstate

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// FolderState is what the engine keeps of one folder pair between attempts,
// besides its UID map (docs/design.md#the-uid-map-and-sync-state): which servers, folders and UIDVALIDITYs
// the map was written for, and what the folders looked like when the last
// attempt finished, so that an unchanged folder is skipped without opening it.
type FolderState struct {
	// Servers names both accounts (host, port, login) the map was written
	// between: a map is void on any other pair of mailboxes.
	Servers     string `json:"servers"`
	Destination string `json:"destination"` // the destination folder: the first attempt's plan holds
	Filter      string `json:"filter"`      // transfer.Options.filterKey of the last attempt
	UIDValidity uint32 `json:"uid_validity"`
	// DestUIDValidity: a destination folder deleted and created again has
	// another, and the map's destination UIDs are void.
	DestUIDValidity uint32 `json:"dest_uid_validity"`
	// ForeignBelow: destination messages with a lower UID that the map
	// lacks were compared with every message the engine wanted to copy at
	// an attempt that finished the folder: they are not copies this engine made
	// and forgot (a crash before the map was written). Those from here on
	// are compared by identity before anything is copied.
	ForeignBelow uint32 `json:"foreign_below"`
	// Failures are the messages that were refused or unreadable in the last
	// attempt, by source UID, with the server's words; each attempt tries them again.
	Failures []MessageFailure `json:"failures,omitempty"`
	// DroppedKeywords are the source's keywords the destination folder
	// cannot keep (PERMANENTFLAGS), reported once (transfer.FolderResult).
	DroppedKeywords []string `json:"dropped_keywords,omitempty"`
	// Altered counts the copies read back unlike their source message:
	// those the last pass that read back every copy found (the final
	// pass), and those read back since; AlteredExamples names the first
	// MaxAlteredExamples of them.
	Altered         int           `json:"altered,omitempty"`
	AlteredExamples []AlteredCopy `json:"altered_examples,omitempty"`
	// InDoubt are source messages whose APPEND was sent and never
	// answered (the connection broke): the destination may have saved
	// them, even after a later attempt looked. Their copies would have
	// UIDs from InDoubtFrom on (see transfer.folderSync.sweepInDoubt).
	InDoubt      []uint32  `json:"in_doubt,omitempty"`
	InDoubtFrom  uint32    `json:"in_doubt_from,omitempty"`
	InDoubtSince time.Time `json:"in_doubt_since,omitzero"`
	// What both folders looked like when the last attempt finished the folder
	// with nothing left to do (Complete): a folder still alike on both sides
	// (RFC 5819 LIST-STATUS, with HIGHESTMODSEQ, RFC 7162, for flag changes)
	// is skipped. SourceHighestModSeq, taken at SELECT before the listing,
	// is also the modseq as of which every mapped message's flags were
	// carried: a re-run reads the flags of only the messages changed since
	// (CHANGEDSINCE). 0 (no CONDSTORE, or a flag change the destination
	// refused): neither.
	SourceUIDNext       uint32 `json:"source_uid_next"`
	SourceMessages      uint32 `json:"source_messages"`
	SourceHighestModSeq uint64 `json:"source_highest_modseq"`
	DestUIDNext         uint32 `json:"dest_uid_next"`
	DestMessages        uint32 `json:"dest_messages"`
	// SourceBytes is the source folder's size as this attempt counted it
	// (transfer.countSource), for the account's page.
	SourceBytes int64 `json:"source_bytes,omitempty"`
	Covered     int   `json:"covered"` // source messages verified on the destination
	Complete    bool  `json:"complete"`
	// Reads is the folder the map's source UIDs are of when it is not the
	// folder itself: Gmail's All Mail, for a label read from it
	// (transfer.mailbox.Reads). A map of the label's own UIDs is void for it, and
	// the other way round, whatever their UIDVALIDITYs.
	Reads string `json:"reads,omitempty"`
}

// Clone returns st with slices of its own.
func (st FolderState) Clone() FolderState {
	st.Failures, st.InDoubt, st.DroppedKeywords = slices.Clone(st.Failures), slices.Clone(st.InDoubt), slices.Clone(st.DroppedKeywords)
	return st
}

// Mapping is one message this engine copied (or found already copied):
// its source UID, its destination UID and the flags last written to it.
type Mapping struct {
	Source      uint32
	Destination uint32
	Flags       []string
}

// MaxUID is the highest UID there can be (RFC 9051 §2.3.1.1).
const MaxUID = ^uint32(0)

// StateStore keeps an account's sync state between attempts: one FolderState
// per source folder, and each folder's UID map, which is read and written
// in ranges of source UIDs so that memory stays bounded whatever the
// folder's size. The engine calls it from one goroutine.
type StateStore interface {
	// FolderStates returns the state of every source folder that has one.
	FolderStates(ctx context.Context) (map[string]FolderState, error)
	// SetFolderState stores the state of a source folder.
	SetFolderState(ctx context.Context, folder string, st FolderState) error
	// ResetFolders drops the map of each folder of states and stores its
	// state, all at once: a state never describes a map that is gone.
	ResetFolders(ctx context.Context, states map[string]FolderState) error
	// Mappings returns folder's map entries with from ≤ Source ≤ to,
	// ordered by Source.
	Mappings(ctx context.Context, folder string, from, to uint32) ([]Mapping, error)
	// ReplaceMappings replaces folder's entries with from ≤ Source ≤ to by
	// entries (ordered by Source, all in that range).
	ReplaceMappings(ctx context.Context, folder string, from, to uint32, entries []Mapping) error
	// ReplaceFolder makes entries (ordered by Source) the whole of
	// folder's map and st its state, at once: a folder copied in one
	// window ends in one write.
	ReplaceFolder(ctx context.Context, folder string, entries []Mapping, st FolderState) error
	// MappedDestinations returns the destination UIDs of folder's entries
	// that are at least atLeast, in any order.
	MappedDestinations(ctx context.Context, folder string, atLeast uint32) ([]uint32, error)
	// ScriptStates returns what was last put of each Sieve script, by
	// its name.
	ScriptStates(ctx context.Context) (map[string]ScriptState, error)
	// SetScriptState records what was put of the Sieve script name.
	SetScriptState(ctx context.Context, name string, st ScriptState) error
}

// ScriptState is what the engine last put of one Sieve script on the
// destination: between which servers (as FolderState.Servers), and the
// SHA-256 of the content put. A later pass tells by it a script changed on
// the source from one edited on the destination since.
type ScriptState struct {
	Servers string `json:"servers"`
	SHA256  string `json:"sha256"` // hex
	// Active: the engine made it the destination's active script, and
	// has not made another one active since.
	Active bool `json:"active,omitempty"`
}

// MemoryState is a StateStore in memory: for tests, benchmarks and a
// one-off migration without a database. It is safe for concurrent use.
// An entry takes 12 bytes: flag sets are interned, since most messages
// share a handful.
type MemoryState struct {
	mu       sync.Mutex
	folders  map[string]FolderState
	maps     map[string][]memoryEntry
	flagSets [][]string
	flagSet  map[string]uint32 // key of a flag set → index in flagSets
	scripts  map[string]ScriptState
}

type memoryEntry struct {
	source, destination, flags uint32
}

// NewMemoryState returns an empty MemoryState.
func NewMemoryState() *MemoryState {
	return &MemoryState{folders: map[string]FolderState{}, maps: map[string][]memoryEntry{}, flagSet: map[string]uint32{},
		scripts: map[string]ScriptState{}}
}

// ScriptStates implements StateStore.
func (m *MemoryState) ScriptStates(context.Context) (map[string]ScriptState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.scripts), nil
}

// SetScriptState implements StateStore.
func (m *MemoryState) SetScriptState(_ context.Context, name string, st ScriptState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scripts[name] = st
	return nil
}

// FolderStates implements StateStore.
func (m *MemoryState) FolderStates(context.Context) (map[string]FolderState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]FolderState, len(m.folders))
	for name, st := range m.folders {
		out[name] = st.Clone()
	}
	return out, nil
}

// SetFolderState implements StateStore.
func (m *MemoryState) SetFolderState(_ context.Context, folder string, st FolderState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.folders[folder] = st.Clone()
	return nil
}

// ResetFolders implements StateStore.
func (m *MemoryState) ResetFolders(_ context.Context, states map[string]FolderState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for folder, st := range states {
		delete(m.maps, folder)
		m.folders[folder] = st.Clone()
	}
	return nil
}

// Mappings implements StateStore.
func (m *MemoryState) Mappings(_ context.Context, folder string, from, to uint32) ([]Mapping, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := m.maps[folder]
	lo, hi := span(all, from, to)
	out := make([]Mapping, hi-lo)
	for i, e := range all[lo:hi] {
		out[i] = Mapping{Source: e.source, Destination: e.destination, Flags: slices.Clone(m.flagSets[e.flags])}
	}
	return out, nil
}

// ReplaceMappings implements StateStore.
func (m *MemoryState) ReplaceMappings(_ context.Context, folder string, from, to uint32, entries []Mapping) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := m.maps[folder]
	lo, hi := span(all, from, to)
	packed := make([]memoryEntry, len(entries))
	for i, e := range entries {
		packed[i] = memoryEntry{source: e.Source, destination: e.Destination, flags: m.intern(e.Flags)}
	}
	// In place where it fits: a window is mostly added at the end.
	m.maps[folder] = slices.Replace(all, lo, hi, packed...)
	return nil
}

// ReplaceFolder implements StateStore.
func (m *MemoryState) ReplaceFolder(_ context.Context, folder string, entries []Mapping, st FolderState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	packed := make([]memoryEntry, len(entries))
	for i, e := range entries {
		packed[i] = memoryEntry{source: e.Source, destination: e.Destination, flags: m.intern(e.Flags)}
	}
	m.maps[folder] = packed
	m.folders[folder] = st.Clone()
	return nil
}

// intern returns the index of a flag set, adding it when new.
func (m *MemoryState) intern(flags []string) uint32 {
	key := strings.Join(flags, "\x00")
	if i, ok := m.flagSet[key]; ok {
		return i
	}
	i := uint32(len(m.flagSets))
	m.flagSets = append(m.flagSets, slices.Clone(flags))
	m.flagSet[key] = i
	return i
}

// MappedDestinations implements StateStore.
func (m *MemoryState) MappedDestinations(_ context.Context, folder string, atLeast uint32) ([]uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []uint32
	for _, e := range m.maps[folder] {
		if e.destination >= atLeast {
			out = append(out, e.destination)
		}
	}
	return out, nil
}

// Len returns how many messages folder's map holds.
func (m *MemoryState) Len(folder string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.maps[folder])
}

// span returns the index range of all's entries with from ≤ source ≤ to.
func span(all []memoryEntry, from, to uint32) (int, int) {
	lo := sort.Search(len(all), func(i int) bool { return all[i].source >= from })
	hi := sort.Search(len(all), func(i int) bool { return all[i].source > to })
	return lo, max(lo, hi)
}

// memoryStateJSON is MemoryState written out, for a state kept in a file.
type memoryStateJSON struct {
	Folders map[string]FolderState `json:"folders"`
	Maps    map[string][]Mapping   `json:"maps"`
	Scripts map[string]ScriptState `json:"scripts,omitempty"`
}

// MarshalJSON writes the whole state.
func (m *MemoryState) MarshalJSON() ([]byte, error) {
	out := memoryStateJSON{Maps: map[string][]Mapping{}}
	out.Folders, _ = m.FolderStates(context.Background())
	out.Scripts, _ = m.ScriptStates(context.Background())
	for folder := range out.Folders {
		out.Maps[folder], _ = m.Mappings(context.Background(), folder, 0, MaxUID)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a state written by MarshalJSON.
func (m *MemoryState) UnmarshalJSON(data []byte) error {
	var s memoryStateJSON
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	m.mu.Lock()
	m.folders, m.maps, m.flagSets, m.flagSet = map[string]FolderState{}, map[string][]memoryEntry{}, nil, map[string]uint32{}
	m.scripts = map[string]ScriptState{}
	maps.Copy(m.folders, s.Folders)
	maps.Copy(m.scripts, s.Scripts)
	m.mu.Unlock()
	for folder, entries := range s.Maps {
		if err := m.ReplaceMappings(context.Background(), folder, 0, MaxUID, entries); err != nil {
			return err
		}
	}
	return nil
}

// AlteredCopy is a copy the destination holds that differs from what was
// sent: what a careful administrator signs off on, told apart from a
// message not copied.
type AlteredCopy struct {
	SourceUID      uint32 `json:"source_uid"`
	DestinationUID uint32 `json:"destination_uid"`
	Subject        string `json:"subject,omitempty"` // the source message's
	What           string `json:"what"`              // e.g. "its size went from 1 234 to 1 230 bytes"
}

// MaxAlteredExamples caps the altered copies a folder's state names.
const MaxAlteredExamples = 5

// NoteAltered counts found, the altered copies a pass read back, in the
// folder's state: they replace what was known when every copy was read
// back (all), and add to it otherwise.
func (st *FolderState) NoteAltered(found []AlteredCopy, all bool) {
	if all {
		st.Altered, st.AlteredExamples = 0, nil
	}
	st.Altered += len(found)
	for _, a := range found {
		if len(st.AlteredExamples) == MaxAlteredExamples {
			break
		}
		st.AlteredExamples = append(st.AlteredExamples, a)
	}
}

// MessageFailure is a message that could not be copied: refused by the
// destination, or unreadable on the source. The next attempt tries it again.
type MessageFailure struct {
	UID    uint32 `json:"uid"` // in the source folder
	Side   string `json:"side"`
	Reason string `json:"reason"`
	// Subject, Date (INTERNALDATE) and Size name the message to a
	// person, as the source has it; the subject is read after the window
	// that failed (transfer.folderSync.nameFailures), and may be empty.
	Subject string    `json:"subject,omitempty"`
	Date    time.Time `json:"date,omitzero"`
	Size    int64     `json:"size,omitempty"`
}
