package migration

import (
	"context"
	"time"
)

// Pass is one run of a task (of every account, some, or one): the first
// copy, the re-runs before cut-over, the delta on cut-over day each keep
// their own figures (docs/design.md#passes).
type Pass struct {
	Number    int
	Accounts  int // queued when it started
	StartedAt time.Time
	EndedAt   *time.Time // nil while it runs
	State     TaskState  // its end state; "" while it runs
	Figures   PassFigures
}

// PassFigures are what a pass did, from its accounts: live while it runs,
// kept when it ends.
type PassFigures struct {
	Completed, CompletedWithErrors, Failed, Canceled int // accounts
	Totals
}

// PassStore keeps passes: a run's start opens one, its end closes it.
type PassStore interface {
	// TaskPasses returns a task's passes, first first; ErrNotFound for a
	// missing task.
	TaskPasses(ctx context.Context, taskID int64) ([]Pass, error)
}

// Passes returns a task's passes, first first.
func (s *Service) Passes(ctx context.Context, taskID int64) ([]Pass, error) {
	return s.store.TaskPasses(ctx, taskID)
}
