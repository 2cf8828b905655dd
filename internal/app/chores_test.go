package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// TestSchedulerRunsEachChoreAlone: a chore stuck on a slow server is not
// started twice and holds up no other chore; a failure is logged by the
// chore's name; stopping waits for the chore under way.
func TestSchedulerRunsEachChoreAlone(t *testing.T) {
	t.Parallel()
	var (
		slowStarted, slowRunning, quickRuns atomic.Int32
		release                             = make(chan struct{})
		quickRan                            = make(chan struct{}, 100)
		logs                                testsupport.SyncBuffer
	)
	slow := chore{name: "reach the slow server", period: time.Millisecond, atOnce: true, do: func(ctx context.Context) error {
		slowStarted.Add(1)
		if slowRunning.Add(1) > 1 {
			t.Error("the slow chore started while it ran")
		}
		defer slowRunning.Add(-1)
		<-release
		return nil
	}}
	quick := chore{name: "count", period: time.Millisecond, do: func(ctx context.Context) error {
		quickRuns.Add(1)
		select { // the test stops reading after a few
		case quickRan <- struct{}{}:
		default:
		}
		return errors.New("the database is away")
	}}
	s := &scheduler{chores: []chore{slow, quick}, logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { s.run(ctx); close(stopped) }()

	for range 5 { // the quick chore goes on while the slow one hangs
		select {
		case <-quickRan:
		case <-time.After(10 * time.Second):
			t.Fatalf("the quick chore ran %d times beside the slow one", quickRuns.Load())
		}
	}
	if n := slowStarted.Load(); n != 1 {
		t.Errorf("the slow chore started %d times while its first run hung", n)
	}
	if !strings.Contains(logs.String(), "could not count") || !strings.Contains(logs.String(), "the database is away") {
		t.Errorf("the failure is not logged by the chore's name: %q", logs.String())
	}

	stop()
	select {
	case <-stopped:
		t.Fatal("the scheduler stopped while a chore still ran")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the scheduler did not stop once its chores ended")
	}
	if strings.Contains(logs.String(), "could not reach the slow server") {
		t.Errorf("a chore that succeeded was logged as failed: %q", logs.String())
	}
}

// TestSchedulerWaitsAPeriodUnlessAtOnce: a chore first runs a period after
// the start, unless it is to run at once (the pruning of old records).
func TestSchedulerWaitsAPeriodUnlessAtOnce(t *testing.T) {
	t.Parallel()
	ran := make(chan string, 10)
	s := &scheduler{logger: slog.New(slog.DiscardHandler), chores: []chore{
		{name: "later", period: time.Hour, do: func(context.Context) error { ran <- "later"; return nil }},
		{name: "at once", period: time.Hour, atOnce: true, do: func(context.Context) error { ran <- "at once"; return nil }},
	}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go s.run(ctx)
	select {
	case name := <-ran:
		if name != "at once" {
			t.Errorf("%q ran first", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the chore to run at once did not run")
	}
	select {
	case name := <-ran:
		t.Errorf("%q ran before its period", name)
	case <-time.After(50 * time.Millisecond):
	}
}
