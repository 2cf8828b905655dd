package postgres_test

import (
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// Entries appended together keep their order, their times and every
// field; the trail reads them back newest first.
func TestAuditEntriesAppendedTogether(t *testing.T) {
	t.Parallel()
	store, _, _ := newStore(t)
	ctx := t.Context()
	answered := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var entries []migration.AuditEntry
	for i, path := range []string{"/api/v1/tasks", "/api/v1/tasks/7", "/api/v1/endpoints/3"} {
		entries = append(entries, migration.AuditEntry{At: answered.Add(time.Duration(i) * time.Millisecond),
			Actor: "API token 1: ops", Remote: "192.0.2.1", Method: "POST", Route: "/api/v1/tasks",
			What: "Create a task.", Path: path, Status: 201 + i, RequestID: "req-" + path})
	}
	if err := store.AuditRecord(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	got, err := store.AuditList(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) {
		t.Fatalf("%d entries read back, want %d", len(got), len(entries))
	}
	for i, e := range got {
		want := entries[len(entries)-1-i]
		want.ID = e.ID
		if !e.At.Equal(want.At) {
			t.Errorf("entry %d at %v, want %v", i, e.At, want.At)
		}
		e.At = want.At
		if e != want {
			t.Errorf("entry %d read back %+v, want %+v", i, e, want)
		}
		if i > 0 && e.ID >= got[i-1].ID {
			t.Errorf("entry %d has id %d after %d: not in the order appended", i, e.ID, got[i-1].ID)
		}
	}
}
