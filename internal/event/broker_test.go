package event

import (
	"log/slog"
	"testing"
	"time"
)

// TestCommitsInABurstShareAWakeUp: under a pass of many small accounts,
// commits come faster than a live stream needs to read them. The first
// wakes the subscribers at once; those within the interval that follows
// share one wake-up at its end, so none is lost and none costs a read of
// its own.
func TestCommitsInABurstShareAWakeUp(t *testing.T) {
	const interval = 300 * time.Millisecond
	b := newBroker(nil, slog.New(slog.DiscardHandler), interval)
	go b.pace(t.Context())
	wake, unsubscribe := b.Subscribe()
	defer unsubscribe()

	b.notify()
	first := time.Now()
	waitWake(t, wake, "the first commit")
	for range 20 {
		b.notify()
	}
	waitWake(t, wake, "the burst that followed")
	if gap := time.Since(first); gap < interval {
		t.Errorf("the burst woke the subscriber %s after the first commit; want no sooner than %s", gap, interval)
	}
	select {
	case <-wake:
		t.Fatal("the burst woke the subscriber twice")
	case <-time.After(2 * interval):
	}

	b.notify() // after a quiet spell: at once again
	waitWake(t, wake, "a commit after a quiet spell")
}

func waitWake(t *testing.T, wake <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s woke no subscriber", what)
	}
}
