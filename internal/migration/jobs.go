package migration

import (
	"context"
	"errors"
	"time"
)

// The job queues. Attempts and connection tests have queues of their own,
// so that a test of many accounts never waits for attempts, nor attempts
// for tests.
const (
	QueueAttempts = "runs"
	QueueTests    = "tests"
	QueueControl  = "control" // short jobs that start others (AdmitJob)
)

// AdmitJob admits the waiting accounts that have room, when a retry's
// delay ends (all other admissions happen in the transactions that free
// room).
type AdmitJob struct{}

// Kind implements river.JobArgs.
func (AdmitJob) Kind() string { return "admit" }

// AccountTestJob logs in to both sides of one account and records the
// outcome. Its Kind names it in the job queue (River's JobArgs).
// Generation is the account's test generation: only the job of the
// task's current test may record an outcome.
type AccountTestJob struct {
	TaskID     int64 `json:"task_id"`
	AccountID  int64 `json:"account_id"`
	Generation int64 `json:"generation"`
}

// Kind implements river.JobArgs.
func (AccountTestJob) Kind() string { return "account_test" }

// AttemptJob is one attempt: it migrates one account of a task's pass.
// Generation is the account's run generation when it was queued: only the job of the
// current generation may start or finish the account (a job whose process
// died is replaced by one of a newer generation).
type AttemptJob struct {
	TaskID     int64 `json:"task_id"`
	AccountID  int64 `json:"account_id"`
	Generation int64 `json:"generation"`
}

// Kind implements river.JobArgs.
func (AttemptJob) Kind() string { return "account_run" }

// AttemptOutcome is how an attempt, the migration of one account in a
// job, ended.
type AttemptOutcome struct {
	TaskID, AccountID int64
	Generation        int64        // the job's: an outcome of an older generation is dropped
	State             AccountState // completed, completed_with_errors or failed
	Progress          Progress
	LastError         string
	Events            []Event
	// Pending are events of the attempt not logged yet (folder.done events
	// are logged with the next progress, or with the outcome), logged as
	// they are before Events.
	Pending []Event
	// RetryDelays, set on an attempt that failed on a transient fault,
	// queue the account again after RetryDelays[n] for its n-th retry since
	// its first attempt of the pass, instead of failing it, while retries
	// remain.
	RetryDelays []time.Duration
	// ResumeAt, set on an attempt that ended on a long pause, queues the
	// account again to go on then, instead of failing it; ParkedEvent (an
	// account.throttled with the figures it stopped at; the store makes an
	// account.held for a hold) is then logged instead of Events.
	ResumeAt    time.Time
	ParkedEvent *Event
	// LoginRefused is the side whose server refused the account's login
	// (FailureAuth, FailureToken), "" for none: scheduled and final
	// passes leave the account out until its credentials or an endpoint
	// change, or a person runs it.
	LoginRefused string
	// Scripts, when set, is what became of the account's Sieve scripts,
	// kept with the account until its next attempt moves them again.
	Scripts *ScriptsEnd
}

// DefaultRetryDelays space the retries of an account whose attempt failed on
// a transient fault after the copy engine's own reconnects: a server down
// for maintenance or a network outage of minutes.
var DefaultRetryDelays = []time.Duration{30 * time.Second, 2 * time.Minute, 8 * time.Minute}

// AccountTestOutcome is what a connection test of both sides found.
type AccountTestOutcome struct {
	TaskID, AccountID             int64
	Generation                    int64  // the job's: an outcome of an older test is dropped
	SourceError, DestinationError string // empty: the login worked
	// SourceTook and DestinationTook are how long each side's login took.
	SourceTook, DestinationTook time.Duration
	// The source's size, counted after its login, when that worked: the
	// account's total before its first attempt.
	SourceCounted               bool
	SourceMessages, SourceBytes int64
	Events                      []Event
	// Canceled: the test was canceled before it finished; the account
	// keeps the result of its last test.
	Canceled bool
	// LoginRefused is the side whose server refused the login, as for a
	// attempt (AttemptOutcome.LoginRefused); "" for none.
	LoginRefused string
}

// JobStore starts background work on tasks.
type JobStore interface {
	// TaskStartTests queues one AccountTestJob per account that filter
	// selects and that is not in a pass, atomically, and returns how many;
	// the task's state does not change. A missing task answers
	// ErrNotFound, a test under way ErrTestRunning, a task without
	// accounts ErrNoAccounts, a filter that selects none
	// ErrNoAccountSelected.
	TaskStartTests(ctx context.Context, taskID int64, filter AccountFilter) (int, error)
	// TaskStartPass likewise puts the task into TaskQueued, the selected
	// accounts too, and queues them for admission in a pass started by
	// by. While the task runs a migration, a selection's accounts not in
	// it join it instead.
	TaskStartPass(ctx context.Context, taskID int64, filter AccountFilter, by PassStarter) (int, error)
	// AccountStartAttempt likewise runs one account of the task again (a
	// retry): the task is queued with that account alone, or the account
	// joins the migration under way (ErrAccountRunning when it is in it).
	AccountStartAttempt(ctx context.Context, taskID, accountID int64) error
	// TaskCancel stops a queued or running pass, or a connection test
	// (ErrTaskNotRunning else), and says how many accounts or tests stop.
	TaskCancel(ctx context.Context, taskID int64) (int, error)
	// AccountsCancel stops the accounts filter selects of a pass and lets
	// the others go on (ErrNoMigrationRunning, ErrNoRunningAccountSelected),
	// and says how many stop.
	AccountsCancel(ctx context.Context, taskID int64, filter AccountFilter) (int, error)
}

// CancelTask stops a task's pass: accounts not started end at once, running
// ones as soon as their worker notices; a re-run later resumes. A
// connection test stops likewise, and the task returns to the state it
// had before it. A filter that is not zero stops only the accounts of the
// pass it selects. It returns how many accounts (or tests) stop.
func (s *Service) CancelTask(ctx context.Context, taskID int64, filter AccountFilter) (int, error) {
	if err := filter.normalize(); err != nil {
		return 0, err
	}
	if filter.IsZero() {
		return s.store.TaskCancel(ctx, taskID)
	}
	return s.store.AccountsCancel(ctx, taskID, filter)
}

// CancelAccount stops one account of a task's pass; the others go on.
func (s *Service) CancelAccount(ctx context.Context, taskID, accountID int64) error {
	if _, err := s.store.AccountGet(ctx, taskID, accountID); err != nil {
		return err
	}
	_, err := s.store.AccountsCancel(ctx, taskID, AccountFilter{IDs: []int64{accountID}})
	if errors.Is(err, ErrNoRunningAccountSelected) || errors.Is(err, ErrNoMigrationRunning) || errors.Is(err, ErrTaskNotRunning) {
		return ErrAccountNotRunning
	}
	return err
}

// RunTask starts a pass of the task's accounts that filter selects (the
// zero filter: all of them) and returns how many: a first pass copies
// everything, a later one only what the destination lacks. With verify,
// every account looks at both servers, as the final pass does, even one
// whose source is unchanged since its last complete pass.
func (s *Service) RunTask(ctx context.Context, taskID int64, filter AccountFilter, verify bool) (int, error) {
	if err := filter.normalize(); err != nil {
		return 0, err
	}
	by := StartedByHand
	if verify {
		by = StartedToVerify
	}
	return s.store.TaskStartPass(ctx, taskID, filter, by)
}

// RunAccount runs one account of a task again, e.g. after fixing its
// password; the task's state is then derived from all its accounts.
func (s *Service) RunAccount(ctx context.Context, taskID, accountID int64) error {
	return s.store.AccountStartAttempt(ctx, taskID, accountID)
}

// TestTask starts the connection test of the task's accounts that filter
// selects (the zero filter: all of them) and returns how many.
func (s *Service) TestTask(ctx context.Context, taskID int64, filter AccountFilter) (int, error) {
	if err := filter.normalize(); err != nil {
		return 0, err
	}
	return s.store.TaskStartTests(ctx, taskID, filter)
}

// LatestEventSeq returns the seq of the newest event of the service, 0
// with none: a stream that starts after it sends only what is new.
func (s *Service) LatestEventSeq(ctx context.Context) (int64, error) {
	return s.store.EventLatestSeq(ctx)
}

// Events returns a page of a task's event log after seq afterSeq; task 0
// means every task's.
func (s *Service) Events(ctx context.Context, taskID, afterSeq int64, limit int) ([]Event, error) {
	if taskID < 0 {
		return nil, ErrNotFound
	}
	limit, err := eventPage(afterSeq, limit)
	if err != nil {
		return nil, err
	}
	return s.store.EventList(ctx, taskID, afterSeq, limit)
}

// eventPage checks a page of events asked for, and returns its size: 0
// means DefaultEventPage.
func eventPage(afterSeq int64, limit int) (int, error) {
	if afterSeq < 0 {
		return 0, invalid("after", "must be 0 or more")
	}
	if limit == 0 {
		limit = DefaultEventPage
	}
	if limit < 1 || limit > MaxEventPage {
		return 0, invalid("limit", "must be between 1 and %d", MaxEventPage)
	}
	return limit, nil
}

// AttemptLimits bound the attempts of the whole service (docs/design.md#limits).
type AttemptLimits struct {
	// ConnectionsPerHost bounds the IMAP connections that running
	// accounts hold on one server host, across tasks and processes;
	// 0: no bound.
	ConnectionsPerHost int
}

// The IMAP connections one running account is counted for on each side:
// the copy engine reads the source on one session and writes the
// destination on one, its APPENDs included; a Gmail destination adds a
// session on All Mail for labels, and a destination that signs in with a
// token has two for a moment when its session is renewed before the first
// APPEND. The destination's count covers those.
const (
	SourceConnections      = 1
	DestinationConnections = 2
)

// TestState is where an account's login test is while it has one
// (accounts.test_state; none when no test is pending).
type TestState string

// The states of a pending login test.
const (
	TestWaiting TestState = "waiting" // its job is not queued yet: a task queues its parallelism of tests at a time
	TestQueued  TestState = "queued"
)

// TestStates are every TestState.
var TestStates = []TestState{TestWaiting, TestQueued}
