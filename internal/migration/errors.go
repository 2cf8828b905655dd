package migration

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound means the addressed resource does not exist.
var ErrNotFound = errors.New("not found")

// InvalidError reports a field that breaks a rule. Its text is the whole
// message a client sees, e.g. "tls_mode must be ssl|starttls|plain".
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return e.Field + " " + e.Reason }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ErrMasterPasswordMissing refuses a master login without a password,
// given or stored.
var ErrMasterPasswordMissing = &InvalidError{Field: "auth.master_password", Reason: "must not be empty with the master method"}

// ErrClientSecretMissing refuses an application's own tokens without its
// client secret, given or stored.
var ErrClientSecretMissing = &InvalidError{Field: "auth.oauth2.client_secret", Reason: "must not be empty with the client_credentials grant"}

// ErrServiceAccountKeyMissing is a service account endpoint without its key file.
var ErrServiceAccountKeyMissing = &InvalidError{Field: "auth.oauth2.client_secret", Reason: "must be the service account's JSON key file with the service_account grant"}

// MissingClientSecret is the refusal of grant g without its client secret.
func MissingClientSecret(g OAuth2Grant) error {
	if g == GrantServiceAccount {
		return ErrServiceAccountKeyMissing
	}
	return ErrClientSecretMissing
}

// EndpointInUseError refuses to delete an endpoint that tasks still use.
type EndpointInUseError struct {
	Tasks int64
}

func (e *EndpointInUseError) Error() string {
	return fmt.Sprintf("endpoint is used by %d %s", e.Tasks, plural(int(e.Tasks), "task", "tasks"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ErrTaskRunning refuses a change to a task, or to its accounts, while the
// task is running.
var ErrTaskRunning = errors.New("task is running")

// ErrEndpointRunning refuses a change to an endpoint that a running task
// uses: its accounts would connect to the new server part-way through.
var ErrEndpointRunning = errors.New("endpoint is used by a running task")

// ErrTaskNotRunning refuses to cancel a task that has no run to stop.
var ErrTaskNotRunning = errors.New("task is not running")

// ErrNoMigrationRunning refuses to cancel some accounts of a task that is
// testing or canceling: only a migration's accounts stop one by one.
var ErrNoMigrationRunning = errors.New("task is not running a migration")

// ErrTestRunning refuses a connection test while another one, begun
// alongside a run, is under way.
var ErrTestRunning = errors.New("a connection test is running")

// ErrAccountRunning refuses to change or run again an account that is
// queued or running: its run uses what it read.
var ErrAccountRunning = errors.New("account is running")

// ErrAccountNotRunning refuses to cancel an account that is neither
// queued nor running.
var ErrAccountNotRunning = errors.New("account is not running")

// ErrNoRunningAccountSelected refuses a cancel of some accounts that
// selects none queued or running.
var ErrNoRunningAccountSelected = errors.New("no selected account is running")

// ErrNoAccounts refuses to start work on a task without accounts.
var ErrNoAccounts = errors.New("task has no accounts")

// ErrNoAccountSelected refuses to start work on no account: the task has
// some, but the filter given selects none.
var ErrNoAccountSelected = errors.New("no account of the task matches")

// DuplicateLoginError refuses a source login that the task already has.
// Logins lists them; it is empty when a concurrent insert won the race and
// the store cannot tell which.
type DuplicateLoginError struct {
	Logins []string
}

func (e *DuplicateLoginError) Error() string {
	if len(e.Logins) == 0 {
		return "a source login is already in this task"
	}
	return fmt.Sprintf("source_login %q is already in this task", e.Logins[0])
}

// LineError is one bad row of an imported file.
type LineError struct {
	Line   int
	Reason string
}

// ImportError lists every bad row of an imported file; nothing was stored.
type ImportError struct {
	Lines []LineError
}

// maxListedLines caps the rows an ImportError spells out; the rest are counted.
const maxListedLines = 100

func (e *ImportError) Error() string {
	var b strings.Builder
	for i, l := range e.Lines {
		if i == maxListedLines {
			more := len(e.Lines) - maxListedLines
			fmt.Fprintf(&b, "and %d more bad %s\n", more, plural(more, "line", "lines"))
			break
		}
		fmt.Fprintf(&b, "line %d: %s\n", l.Line, l.Reason)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ErrLeaseLost tells a job that the account it was migrating is no longer
// its own: its lease expired and a newer job holds the account.
var ErrLeaseLost = errors.New("the account's run passed to another job")
