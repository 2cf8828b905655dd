package migration

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorKind classifies an error for whoever answers it, so that an answer
// (an HTTP status, a CLI's exit) follows from the kind and no list of
// sentinels has to be kept beside them.
type ErrorKind int

// The kinds of error. An error without a kind is a failure of the
// service itself (a store that went away).
const (
	KindInternal        ErrorKind = iota
	KindInvalid                   // the request breaks a rule: mend it
	KindNotFound                  // what it names does not exist
	KindConflict                  // the state of a task, an account or an endpoint refuses it now
	KindUnavailable               // the service cannot do it now; try again later
	KindForbidden                 // the principal's role does not allow it
	KindUnauthenticated           // who asks is not known: a sign-in refused
)

// KindOf is the kind of err: that of the first error in its chain that
// has one, else KindInternal; and that error, whose text is what a client
// is told (err itself without a kind).
func KindOf(err error) (ErrorKind, error) {
	var kinded interface {
		error
		Kind() ErrorKind
	}
	if errors.As(err, &kinded) {
		return kinded.Kind(), kinded
	}
	return KindInternal, err
}

// kindError is a sentinel of a kind: its text is what a client sees.
type kindError struct {
	kind ErrorKind
	text string
}

func (e *kindError) Error() string { return e.text }

// Kind says what kind of error e is.
func (e *kindError) Kind() ErrorKind { return e.kind }

func conflict(text string) error { return &kindError{KindConflict, text} }
func notFound(text string) error { return &kindError{KindNotFound, text} }

// unauthenticated is the refusal of a sign-in.
func unauthenticated(text string) error { return &kindError{KindUnauthenticated, text} }

// unavailable is an error of a service that cannot do it now.
func unavailable(text string) error { return &kindError{KindUnavailable, text} }

// internal is an error no client is answered with: it stays within the
// service.
func internal(text string) error { return &kindError{KindInternal, text} }

// ErrNotFound means the addressed resource does not exist.
var ErrNotFound = notFound("not found")

// InvalidError reports a field that breaks a rule. Its text is the whole
// message a client sees, e.g. "tls_mode must be ssl|starttls|plain".
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return e.Field + " " + e.Reason }

// Kind says an invalid field is the client's to mend.
func (e *InvalidError) Kind() ErrorKind { return KindInvalid }

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

// Kind says an endpoint in use refuses its deletion for now.
func (e *EndpointInUseError) Kind() ErrorKind { return KindConflict }

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
var ErrTaskRunning = conflict("task is running")

// ErrEndpointRunning refuses a change to an endpoint that a running task
// uses: its accounts would connect to the new server part-way through.
var ErrEndpointRunning = conflict("endpoint is used by a running task")

// ErrTaskNotRunning refuses to cancel a task that has no pass to stop.
var ErrTaskNotRunning = conflict("task is not running")

// ErrNoMigrationRunning refuses to cancel some accounts of a task that is
// testing or canceling: only a migration's accounts stop one by one.
var ErrNoMigrationRunning = conflict("task is not running a migration")

// ErrTestRunning refuses a connection test while another one, begun
// alongside a pass, is under way.
var ErrTestRunning = conflict("a connection test is running")

// ErrAccountRunning refuses to change or run again an account that is
// queued or running: its attempt uses what it read.
var ErrAccountRunning = conflict("account is running")

// ErrAccountNotRunning refuses to cancel an account that is neither
// queued nor running.
var ErrAccountNotRunning = conflict("account is not running")

// ErrNoRunningAccountSelected refuses a cancel of some accounts that
// selects none queued or running.
var ErrNoRunningAccountSelected = conflict("no selected account is running")

// ErrNoWebhook refuses to test the webhook of a task that has none.
var ErrNoWebhook = conflict("the task has no webhook: set its URL and secret first")

// ErrWebhooksUnavailable: this process sends no webhook calls.
var ErrWebhooksUnavailable = unavailable("this process does not call webhooks")

// ErrNoAccounts refuses to start work on a task without accounts.
var ErrNoAccounts = conflict("task has no accounts")

// ErrNoAccountSelected refuses to start work on no account: the task has
// some, but the filter given selects none.
var ErrNoAccountSelected = conflict("no account of the task matches")

// DuplicateLoginError refuses a source login that the task already has.
// Logins lists them; it is empty when a concurrent insert won the race and
// the store cannot tell which.
type DuplicateLoginError struct {
	Logins []string
}

// Kind says a login taken refuses another account of it.
func (e *DuplicateLoginError) Kind() ErrorKind { return KindConflict }

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

// Kind says a file with bad rows is the client's to mend.
func (e *ImportError) Kind() ErrorKind { return KindInvalid }

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
var ErrLeaseLost = internal("the account passed to another job")
