package persist

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestPersistTriesAgainUntilTheStoreAnswers: an outcome survives a
// database that is briefly unreachable, and a store that never answers
// gives its error back after the last try.
func TestPersistTriesAgainUntilTheStoreAnswers(t *testing.T) {
	saved := Delays
	Delays = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	t.Cleanup(func() { Delays = saved })
	logger := slog.New(slog.DiscardHandler)
	down := errors.New("connection refused")

	calls := 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the job's context has ended: the outcome is stored all the same
	err := Outcome(ctx, logger, func(ctx context.Context) error {
		if calls++; ctx.Err() != nil {
			return ctx.Err()
		}
		if calls < 3 {
			return down
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("Outcome: %v after %d calls, want nil after 3", err, calls)
	}

	calls = 0
	err = Outcome(context.Background(), logger, func(context.Context) error { calls++; return down })
	if !errors.Is(err, down) || calls != 1+len(Delays) {
		t.Errorf("Outcome against a dead store: %v after %d calls", err, calls)
	}
}
