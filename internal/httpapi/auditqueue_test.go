package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// heldTrail is a trail whose every write waits until the test lets it go,
// and records the paths of each batch.
type heldTrail struct {
	writes  chan []string // a write has begun, with its batch's paths
	release chan error    // lets the write under way end, with this error
}

func (h *heldTrail) AuditRecord(ctx context.Context, entries ...migration.AuditEntry) error {
	paths := make([]string, len(entries))
	for i, e := range entries {
		paths[i] = e.Path
	}
	h.writes <- paths
	return <-h.release
}

// The entries of requests answered while a batch is written go in the
// next, in the order they came, and each request waits for its own: none
// ends before its entry is stored, and the one that wrote a batch ends
// when that batch is stored, without writing the others'.
func TestAuditEntriesAnsweredMeanwhileShareAWrite(t *testing.T) {
	trail := &heldTrail{writes: make(chan []string), release: make(chan error)}
	q := &auditQueue{trail: trail}
	ended := map[string]chan error{}
	record := func(path string) {
		end := make(chan error, 1)
		ended[path] = end
		go func() { end <- q.record(t.Context(), migration.AuditEntry{Path: path}) }()
	}
	waitingFor := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			q.mu.Lock()
			waiting := len(q.waiting)
			q.mu.Unlock()
			if waiting == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d entries waiting, want %d", waiting, n)
			}
		}
	}
	notEnded := func(paths ...string) {
		t.Helper()
		for _, p := range paths {
			select {
			case err := <-ended[p]:
				t.Fatalf("the request of %s ended (%v) before its entry was stored", p, err)
			default:
			}
		}
	}
	endedWith := func(want error, paths ...string) {
		t.Helper()
		for _, p := range paths {
			select {
			case err := <-ended[p]:
				if !errors.Is(err, want) {
					t.Errorf("the request of %s ended with %v, want %v", p, err, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("the request of %s did not end", p)
			}
		}
	}

	record("/first")
	if got := <-trail.writes; !slices.Equal(got, []string{"/first"}) {
		t.Fatalf("first batch %q, want the first entry alone", got)
	}
	for i := range 3 {
		record(fmt.Sprint("/later-", i))
		waitingFor(i + 1)
	}
	notEnded("/first", "/later-0", "/later-1", "/later-2")

	trail.release <- nil
	endedWith(nil, "/first")
	if got, want := <-trail.writes, []string{"/later-0", "/later-1", "/later-2"}; !slices.Equal(got, want) {
		t.Fatalf("second batch %q, want %q", got, want)
	}
	notEnded("/later-0", "/later-1", "/later-2")

	refused := errors.New("the database refused")
	trail.release <- refused
	endedWith(refused, "/later-0", "/later-1", "/later-2")

	// The queue is idle again: the next entry is written at once, alone.
	record("/again")
	if got := <-trail.writes; !slices.Equal(got, []string{"/again"}) {
		t.Fatalf("batch after an idle queue %q, want the entry alone", got)
	}
	trail.release <- nil
	endedWith(nil, "/again")
}
