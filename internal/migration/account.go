package migration

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/progress"
)

// AccountState is where one mailbox is in its migration.
type AccountState string

// The states of an account.
const (
	AccountIdle                AccountState = "idle"
	AccountQueued              AccountState = "queued"
	AccountRunning             AccountState = "running"
	AccountTesting             AccountState = "testing"
	AccountCompleted           AccountState = "completed"
	AccountCompletedWithErrors AccountState = "completed_with_errors"
	AccountFailed              AccountState = "failed"
	AccountCanceled            AccountState = "canceled"
)

// InPass reports whether an account is in a pass: queued for it, or
// running (InPassStates).
func (s AccountState) InPass() bool { return slices.Contains(InPassStates, s) }

// AccountStates are every AccountState, in the order the API lists them.
var AccountStates = []AccountState{AccountIdle, AccountQueued, AccountRunning, AccountTesting,
	AccountCompleted, AccountCompletedWithErrors, AccountFailed, AccountCanceled}

// Limits on account fields.
const (
	MaxLoginBytes    = 1024
	MaxPasswordBytes = 1024
)

// AccountInput is what a client sets on an account. On update an empty
// password keeps the stored one.
type AccountInput struct {
	SourceLogin         string
	SourcePassword      Password
	DestinationLogin    string
	DestinationPassword Password
	// DestinationPasswordSameAsSource links the destination password to
	// the source's: a later change of the source password is used on both
	// sides. A new account without a destination password is linked,
	// unless the destination takes refresh tokens (never shared).
	DestinationPasswordSameAsSource bool
}

// Account is one mailbox of a task, as clients see it: no passwords.
type Account struct {
	ID               int64
	TaskID           int64
	SourceLogin      string
	DestinationLogin string
	State            AccountState
	SourceTest       *TestResult
	DestinationTest  *TestResult
	Progress         Progress
	LastError        string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	StartedAt        *time.Time
	FinishedAt       *time.Time
	// PausedUntil: a server throttled the running account, which goes on
	// then where it was.
	PausedUntil *time.Time
	// LoginRefused is the side whose server refused the account's login
	// at its last attempt or test ("" for none): it needs credentials.
	LoginRefused string
	// DestinationLinkedToSource: the destination login uses the source
	// password, whatever it is changed to.
	DestinationLinkedToSource bool
	// Scripts is what became of the account's Sieve scripts at the last
	// attempt that moved them; nil when none did.
	Scripts *ScriptsEnd
}

// TestResult is the outcome of the last login test of one side.
type TestResult struct {
	OK       bool
	Error    string
	TestedAt time.Time
	// Outdated: the account's logins or passwords changed after the test.
	Outdated bool
}

// Progress counts what a migration of one account has done: the one type
// of the figures, which the engine counts in and the API shows.
type Progress = progress.Figures

// SecretNeeds says what the accounts of a task must bring to log in on
// each side: a password, a refresh token, or nothing (a master login, an
// application's own token).
type SecretNeeds struct {
	Source, Destination AccountSecret
}

// EveryPassword: both sides log in with the accounts' passwords.
var EveryPassword = SecretNeeds{Source: SecretPassword, Destination: SecretPassword}

// secretField names the input field of a side's secret of kind: the
// password and the refresh token share the account's place for it.
func secretField(side string, kind AccountSecret) string {
	if kind == SecretRefreshToken {
		return side + "_refresh_token"
	}
	return side + "_password"
}

// normalizeNew checks an account to be created and fills in defaults: the
// destination login is the source's unless given, and so is the
// destination's password, as a link. A side that needs no secret takes
// none; a refresh token may come later, from a device authorization.
func (in *AccountInput) normalizeNew(needs SecretNeeds) error {
	if in.SourcePassword == "" && needs.Source == SecretPassword {
		return invalid(secretField("source", needs.Source), "must not be empty")
	}
	if in.DestinationPassword == "" {
		// A user's refresh token is the user's: one side's does not stand
		// for the other's.
		in.DestinationPasswordSameAsSource = needs.Destination != SecretRefreshToken
	}
	if in.DestinationPasswordSameAsSource && needs.Destination == SecretPassword {
		field := secretField("destination", needs.Destination)
		switch {
		case needs.Source == NoSecret:
			return invalid(field, "must not be empty: the source logs in without one, so there is none to share")
		case needs.Source != needs.Destination:
			return invalid(field, "must not be empty: the source's %s cannot stand for it", strings.ReplaceAll(string(needs.Source), "_", " "))
		}
	}
	return in.normalize(needs)
}

// normalize checks the fields and defaults the destination login. Logins
// are trimmed of surrounding space; secrets are taken as they are.
func (in *AccountInput) normalize(needs SecretNeeds) error {
	in.SourceLogin = strings.TrimSpace(in.SourceLogin)
	in.DestinationLogin = strings.TrimSpace(in.DestinationLogin)
	if in.SourceLogin == "" {
		return invalid("source_login", "must not be empty")
	}
	if in.DestinationLogin == "" {
		in.DestinationLogin = in.SourceLogin
	}
	if in.DestinationPasswordSameAsSource && needs.Destination == SecretRefreshToken {
		return invalid("destination_password_same_as_source", "must be false: the destination takes the user's own refresh token")
	}
	if in.DestinationPasswordSameAsSource && in.DestinationPassword != "" {
		return invalid("destination_password", "must be empty when destination_password_same_as_source is true")
	}
	for _, f := range []struct{ name, value string }{
		{"source_login", in.SourceLogin},
		{"destination_login", in.DestinationLogin},
	} {
		if !plainText(f.value, MaxLoginBytes) {
			return invalid(f.name, "must be UTF-8 without control characters, at most %d bytes", MaxLoginBytes)
		}
	}
	for _, f := range []struct {
		side  string
		kind  AccountSecret
		value Password
	}{
		{"source", needs.Source, in.SourcePassword},
		{"destination", needs.Destination, in.DestinationPassword},
	} {
		if err := checkSecret(secretField(f.side, f.kind), f.kind, f.value); err != nil {
			return err
		}
	}
	return nil
}

// checkSecret checks an account's secret of kind: a refresh token may be
// longer than a password.
func checkSecret(field string, kind AccountSecret, value Password) error {
	if kind == SecretRefreshToken {
		if len(value) > MaxRefreshTokenBytes || strings.ContainsAny(string(value), "\x00\r\n") {
			return invalid(field, "must be at most %d bytes, without NUL, CR or LF", MaxRefreshTokenBytes)
		}
		return nil
	}
	return checkPassword(field, value)
}

// checkPassword refuses a password no login could send: NUL separates
// the fields of AUTHENTICATE PLAIN (RFC 4616), and CR or LF would end an
// IMAP command line.
func checkPassword(field string, p Password) error {
	if len(p) > MaxPasswordBytes || strings.ContainsAny(string(p), "\x00\r\n") {
		return invalid(field, "must be at most %d bytes, without NUL, CR or LF", MaxPasswordBytes)
	}
	return nil
}

// AccountStore keeps accounts. A missing task or account answers
// ErrNotFound (an account of another task is missing too); a change while
// the task is running answers ErrTaskRunning; a source login the task has
// already answers *DuplicateLoginError.
type AccountStore interface {
	// AccountsAdd stores all of accounts in one transaction, or none.
	AccountsAdd(ctx context.Context, taskID int64, accounts []AccountInput) ([]int64, error)
	// AccountLoginsTaken returns those of logins that the task has already.
	AccountLoginsTaken(ctx context.Context, taskID int64, logins []string) ([]string, error)
	AccountGet(ctx context.Context, taskID, id int64) (Account, error)
	AccountList(ctx context.Context, taskID int64, q AccountQuery) (AccountsPage, error)
	AccountUpdate(ctx context.Context, taskID, id int64, in AccountInput) error
	AccountDelete(ctx context.Context, taskID, id int64) error
	AccountsDelete(ctx context.Context, taskID int64, filter AccountFilter) (int, error)
}

// Credentials are what logging in to both sides of an account takes.
type Credentials struct {
	SourceLogin         string
	SourcePassword      Password
	DestinationLogin    string
	DestinationPassword Password
}
