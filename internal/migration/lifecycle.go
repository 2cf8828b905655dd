package migration

import (
	"fmt"
	"strings"
)

// The rules of an attempt's life, which storage applies atomically: how
// an attempt ends, and the sentence that says so.

// StartedAttempt is what the attempt of an account needs, read in the
// transaction that starts it.
type StartedAttempt struct {
	Task                Task
	Source, Destination Endpoint
	// Account's Progress is what the attempt carries on from: zero for the
	// pass's first attempt, the figures so far for one that resumes the
	// pass (a retry, a takeover).
	Account Account
	// Verifying: the account's pass looks at both servers, even when the
	// source is unchanged since its last complete pass (the final pass, a
	// verifying pass); a delta pass otherwise trusts the source.
	Verifying bool
	// Credentials are the account's logins and passwords, read with the
	// rest: the attempt needs no second read. CredentialsErr says why they
	// could not be opened (a secret key that is not the one they were
	// sealed with).
	Credentials    Credentials
	CredentialsErr error
}

// StartedEvent is the account.started event of run.
func (run StartedAttempt) StartedEvent() Event {
	login := run.Account.SourceLogin
	return Event{Kind: EventAccountStarted, TaskID: run.Task.ID, AccountID: run.Account.ID,
		Login: login, Host: run.Source.Host, Port: run.Source.Port,
		Message: fmt.Sprintf("%s: migration started from %s to %s", login, run.Source.Address(), run.Destination.Address())}
}

// PassEndState is the state a pass leaves its task in when its last account
// has ended, from the states of all the task's accounts: canceled when it
// was being canceled; failed when every account failed; completed with
// errors when some failed, were incomplete, or were canceled on their own
// (their mail is not all there); completed otherwise.
func PassEndState(canceling bool, accounts AccountCounts) TaskState {
	failed := accounts.ByState[AccountFailed]
	switch {
	case canceling:
		return TaskCanceled
	case failed == accounts.Total:
		return TaskFailed
	case failed > 0 || accounts.ByState[AccountCompletedWithErrors] > 0 || accounts.ByState[AccountCanceled] > 0:
		return TaskCompletedWithErrors
	}
	return TaskCompleted
}

// PassEndEvent is the event that closes a pass of task: run.finished, or
// run.canceled, with the accounts' outcomes in words.
func PassEndEvent(taskID int64, state TaskState, accounts AccountCounts) Event {
	kind, verb := EventRunFinished, "pass finished"
	if state == TaskCanceled {
		kind, verb = EventRunCanceled, "pass canceled"
	}
	message := fmt.Sprintf("%s: %s", verb, strings.ReplaceAll(string(state), "_", " ")) + accountOutcomes(accounts)
	return Event{Kind: kind, TaskID: taskID, Message: message}
}

// accountOutcomes says how the task's accounts ended, e.g. " (2 accounts:
// 1 completed, 1 failed)"; empty when none has.
func accountOutcomes(accounts AccountCounts) string {
	var parts []string
	for _, s := range []struct {
		state AccountState
		words string
	}{
		{AccountCompleted, "completed"}, {AccountCompletedWithErrors, "completed with errors"},
		{AccountFailed, "failed"}, {AccountCanceled, "canceled"},
	} {
		if n := accounts.ByState[s.state]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s.words))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d %s: %s)", accounts.Total, plural(int(accounts.Total), "account", "accounts"), strings.Join(parts, ", "))
}
