package migration

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// TaskState is where a task is in its life.
type TaskState string

// The states of a task (docs/design.md#task-states).
const (
	TaskIdle                TaskState = "idle"
	TaskQueued              TaskState = "queued"
	TaskRunning             TaskState = "running"
	TaskTesting             TaskState = "testing"
	TaskCanceling           TaskState = "canceling"
	TaskCompleted           TaskState = "completed"
	TaskCompletedWithErrors TaskState = "completed_with_errors"
	TaskFailed              TaskState = "failed"
	TaskCanceled            TaskState = "canceled"
)

// TaskStates are every TaskState, in the order the API lists them.
var TaskStates = []TaskState{TaskIdle, TaskQueued, TaskRunning, TaskTesting, TaskCanceling,
	TaskCompleted, TaskCompletedWithErrors, TaskFailed, TaskCanceled}

// RunningTaskStates are the states in which the spec's "running condition"
// holds: the task cannot be changed or deleted, nor its accounts deleted.
var RunningTaskStates = []TaskState{TaskQueued, TaskRunning, TaskTesting, TaskCanceling}

// MigratingTaskStates are the states in which a task runs a migration.
var MigratingTaskStates = []TaskState{TaskQueued, TaskRunning}

// Migrating reports whether a task runs a migration (not a connection
// test, not a cancel): accounts can join it, or leave it one by one.
func (s TaskState) Migrating() bool { return s == TaskQueued || s == TaskRunning }

// Running reports whether s is one of RunningTaskStates.
func (s TaskState) Running() bool {
	for _, r := range RunningTaskStates {
		if s == r {
			return true
		}
	}
	return false
}

// TaskSpec is what a client sets on a task.
type TaskSpec struct {
	Name                  string
	SourceEndpointID      int64
	DestinationEndpointID int64
	Options               TaskOptions
}

// Task is a migration from one endpoint to another, with figures derived
// from its accounts.
type Task struct {
	ID int64
	TaskSpec
	State      TaskState
	Accounts   AccountCounts
	Totals     Totals
	Tests      TestFigures
	Logins     LoginFigures
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
	// PausedAt is when the task was paused: no pass starts until it is
	// resumed. Nil when it is not.
	PausedAt *time.Time
}

// AccountCounts says how many of a task's accounts are in each state.
type AccountCounts struct {
	Total   int64
	ByState map[AccountState]int64
}

// TestFigures say how far the task's current or last connection test got,
// and whether it is under way (Running): a test never changes the task's
// state.
type TestFigures struct {
	Total, Tested, Failed int64
	Running               bool
	StartedAt             *time.Time // when the test began; nil before the first
	// SourceLogins and DestinationLogins are how long the logins of the
	// accounts tested so far took on each side, in all.
	SourceLogins, DestinationLogins time.Duration
	// SourceHost and DestinationHost name the servers in PaceWords; the
	// service fills them in while the test goes slowly (Slow).
	SourceHost, DestinationHost string
}

// Slow reports whether the test under way goes slowly enough for its
// pace to be told (PaceWords).
func (f TestFigures) Slow(now time.Time) bool {
	perAccount, ok := f.pace(now)
	return ok && perAccount >= SlowTestPace
}

// TimeLeft is how long the test under way should take still, at the pace
// of the accounts it has tested so far; false before it has tested one,
// or when it is not under way.
func (f TestFigures) TimeLeft(now time.Time) (time.Duration, bool) {
	perAccount, ok := f.pace(now)
	return perAccount * time.Duration(f.Total-f.Tested), ok
}

// pace is how long the test under way has taken an account so far;
// false before it has tested one, when it is not under way, or done.
func (f TestFigures) pace(now time.Time) (time.Duration, bool) {
	if !f.Running || f.Tested == 0 || f.StartedAt == nil || f.Total <= f.Tested {
		return 0, false
	}
	return now.Sub(*f.StartedAt) / time.Duration(f.Tested), true
}

// SlowTestPace is how long a login test may take an account, on average,
// before its pace is told in words: a server answers a good login in
// milliseconds; one that delays logins after failures takes seconds.
const SlowTestPace = time.Second

// PaceWords say, while a test goes slowly, which server makes it slow
// and at what pace, what that means for the accounts left, and that those
// whose logins work (working) can run meanwhile; "" while it goes at a
// normal pace, or is not under way.
func (f TestFigures) PaceWords(now time.Time, working int64) string {
	perAccount, ok := f.pace(now)
	if !ok || perAccount < SlowTestPace {
		return ""
	}
	left := perAccount * time.Duration(f.Total-f.Tested)
	takes := "under a minute"
	if left >= time.Minute {
		takes = "about " + spanWords(left)
	}
	slow := f.slowServers()
	if slow == "" {
		slow = "the servers answer about one login every " + paceWords(perAccount)
	}
	words := fmt.Sprintf("%s (as a server that delays logins after failures does): the %d %s left would take %s",
		slow, f.Total-f.Tested, plural(int(f.Total-f.Tested), "account", "accounts"), takes)
	if working > 0 {
		words += fmt.Sprintf("; the %d whose logins work can run now", working)
	}
	return words
}

// slowServers names the server whose logins make the test slow, with its
// pace: "imap.old.example (the source) takes about 15 s a login"; both
// when neither takes two thirds of the time the logins took; "" when
// neither side's logins took noticeably long (slowLogin), as when the
// test waits for the failed-login limit rather than for the servers.
// Good logins, fast even on a server that delays failures, lower a side's
// average: its share of the time tells it, not a threshold on it.
func (f TestFigures) slowServers() string {
	type server struct {
		host, side string
		average    time.Duration
	}
	servers := []server{{f.SourceHost, "source", f.SourceLogins / time.Duration(f.Tested)},
		{f.DestinationHost, "destination", f.DestinationLogins / time.Duration(f.Tested)}}
	if servers[1].average > servers[0].average {
		servers[0], servers[1] = servers[1], servers[0]
	}
	if servers[0].average < slowLogin {
		return ""
	}
	if 3*servers[0].average >= 2*(servers[0].average+servers[1].average) {
		servers = servers[:1]
	}
	var parts []string
	for i, s := range servers {
		name := "the " + s.side + " server"
		if s.host != "" {
			name = s.host + " (the " + s.side + ")"
		}
		if i == 0 {
			parts = append(parts, fmt.Sprintf("%s takes about %s a login", name, paceWords(s.average)))
		} else {
			parts = append(parts, fmt.Sprintf("%s about %s", name, paceWords(s.average)))
		}
	}
	return strings.Join(parts, ", and ")
}

// slowLogin is a login's average time that no server takes for good
// logins alone: they answer in milliseconds.
const slowLogin = 250 * time.Millisecond

// paceWords is a pace in seconds, to the tenth under 10 s: "3.3 s".
func paceWords(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
}

// spanWords is a span of a minute or more in hours and minutes: "54
// minutes", "2 hours 5 minutes".
func spanWords(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	h, m := m/60, m%60
	switch {
	case h == 0:
		return fmt.Sprintf("%d %s", m, plural(m, "minute", "minutes"))
	case m == 0:
		return fmt.Sprintf("%d %s", h, plural(h, "hour", "hours"))
	}
	return fmt.Sprintf("%d %s %d %s", h, plural(h, "hour", "hours"), m, plural(m, "minute", "minutes"))
}

// LoginFigures say how the logins of a task's accounts stand, from each
// account's last login test and attempt: working (both sides logged in
// at the last test, or the last attempt completed), refused (a server
// refused a side at the last test or attempt), untested (the rest).
type LoginFigures struct {
	Working, Refused, Untested int64
}

// LoggedInStates are the states of an account whose last attempt proves its
// logins work: it completed, with or without messages refused.
var LoggedInStates = []AccountState{AccountCompleted, AccountCompletedWithErrors}

// Totals adds up the progress of a task's accounts: the figures of each
// account's current or last pass, and what they copied to date, over
// every pass.
type Totals struct {
	MessagesCopied       int64
	BytesCopied          int64
	MessagesCopiedToDate int64
	BytesCopiedToDate    int64
	MessagesSkipped      int64
	MessagesFailed       int64
	// The size of the accounts' sources as last counted, and how many
	// accounts have no count yet (never run).
	SourceMessages    int64
	SourceBytes       int64
	AccountsUncounted int64
}

// Normalize checks s and fills in option defaults.
func (s *TaskSpec) Normalize() error {
	if err := checkText("name", s.Name, MaxLabelBytes); err != nil {
		return err
	}
	if s.SourceEndpointID <= 0 {
		return invalid("source_endpoint_id", "must name an endpoint")
	}
	if s.DestinationEndpointID <= 0 {
		return invalid("destination_endpoint_id", "must name an endpoint")
	}
	if s.DestinationEndpointID == s.SourceEndpointID {
		// Most likely a slip of the form; moving mailboxes within one
		// server takes two endpoints on it, whose labels tell them apart.
		return invalid("destination_endpoint_id", "must differ from source_endpoint_id (to move mailboxes within one server, register it twice)")
	}
	return s.Options.Normalize()
}

// TaskStore keeps tasks. Missing ids answer ErrNotFound; changing or
// deleting a running task answers ErrTaskRunning; an endpoint id that names
// no endpoint answers *InvalidError.
type TaskStore interface {
	TaskCreate(ctx context.Context, spec TaskSpec) (int64, error)
	TaskGet(ctx context.Context, id int64) (Task, error)
	// TaskState is the state alone, without TaskGet's account figures.
	TaskState(ctx context.Context, id int64) (TaskState, error)
	// TaskSecretNeeds says which sides of the task's accounts log in
	// with passwords of their own.
	TaskSecretNeeds(ctx context.Context, id int64) (SecretNeeds, error)
	TaskList(ctx context.Context) ([]Task, error)
	TaskUpdate(ctx context.Context, id int64, spec TaskSpec) error
	TaskDelete(ctx context.Context, id int64) error
}
