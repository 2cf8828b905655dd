package migration

import "context"

// AccountTestJob logs in to both sides of one account and records the
// outcome. Its Kind names it in the job queue (River's JobArgs).
type AccountTestJob struct {
	TaskID    int64 `json:"task_id"`
	AccountID int64 `json:"account_id"`
}

// Kind implements river.JobArgs.
func (AccountTestJob) Kind() string { return "account_test" }

// AccountRunJob migrates one account of a task run.
type AccountRunJob struct {
	TaskID    int64 `json:"task_id"`
	AccountID int64 `json:"account_id"`
}

// Kind implements river.JobArgs.
func (AccountRunJob) Kind() string { return "account_run" }

// AccountRunOutcome is how the migration of one account ended.
type AccountRunOutcome struct {
	TaskID, AccountID int64
	State             AccountState // completed, completed_with_errors or failed
	Progress          Progress
	LastError         string
	Events            []Event
}

// AccountTestOutcome is what a connection test of both sides found.
type AccountTestOutcome struct {
	TaskID, AccountID             int64
	SourceError, DestinationError string // empty: the login worked
	Events                        []Event
}

// JobStore starts background work on tasks.
type JobStore interface {
	// TaskStartTests puts a task that is not running into TaskTesting and
	// queues one AccountTestJob per account, atomically. A missing task
	// answers ErrNotFound, a running one ErrTaskRunning, one without
	// accounts ErrNoAccounts.
	TaskStartTests(ctx context.Context, taskID int64) error
	// TaskStartRun likewise puts the task into TaskQueued, its accounts
	// too, and queues one AccountRunJob per account.
	TaskStartRun(ctx context.Context, taskID int64) error
	// TaskCancel stops a queued or running run (ErrTaskNotRunning else).
	TaskCancel(ctx context.Context, taskID int64) error
}

// CancelTask stops a task's run: accounts not started end at once, running
// ones as soon as their worker notices; a re-run later resumes.
func (s *Service) CancelTask(ctx context.Context, taskID int64) error {
	return s.store.TaskCancel(ctx, taskID)
}

// RunTask starts a run of every account of a task: a first run copies
// everything, a later one only what the destination lacks.
func (s *Service) RunTask(ctx context.Context, taskID int64) error {
	return s.store.TaskStartRun(ctx, taskID)
}

// TestTask starts the connection test of every account of a task.
func (s *Service) TestTask(ctx context.Context, taskID int64) error {
	return s.store.TaskStartTests(ctx, taskID)
}

// Events returns a page of a task's event log after seq afterSeq; task 0
// means every task's.
func (s *Service) Events(ctx context.Context, taskID, afterSeq int64, limit int) ([]Event, error) {
	if taskID < 0 {
		return nil, ErrNotFound
	}
	if afterSeq < 0 {
		return nil, invalid("after", "must be 0 or more")
	}
	if limit == 0 {
		limit = DefaultEventPage
	}
	if limit < 1 || limit > MaxEventPage {
		return nil, invalid("limit", "must be between 1 and %d", MaxEventPage)
	}
	return s.store.EventList(ctx, taskID, afterSeq, limit)
}
