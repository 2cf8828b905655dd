package migration

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The account's state machine (docs/design.md#the-account-state-machine):
// what happens to an account's attempt in each situation, decided by one
// pure function from the facts storage reads under the account's row
// lock. Storage applies the move through one guarded statement per move,
// whose state guard and target come from the move itself (From, To); it
// decides nothing itself.

// AccountTriggerKind is what happens to an account: a command of a
// person or a pass, or what its job reports.
type AccountTriggerKind string

// The triggers an account answers.
const (
	TriggerRun    AccountTriggerKind = "run"    // a pass selects it, or it joins the pass under way
	TriggerCancel AccountTriggerKind = "cancel" // a cancel of the task or of the account
	TriggerStart  AccountTriggerKind = "start"  // its admitted job starts
	TriggerEnd    AccountTriggerKind = "end"    // its job's attempt ended (Outcome)
	TriggerLost   AccountTriggerKind = "lost"   // its job's process died: the lease expired, or the job vanished
)

// AccountTriggerKinds are every AccountTriggerKind, in the order
// docs/design.md lists them.
var AccountTriggerKinds = []AccountTriggerKind{TriggerRun, TriggerCancel, TriggerStart, TriggerEnd, TriggerLost}

// AccountTrigger is one thing that happens to an account.
type AccountTrigger struct {
	Kind AccountTriggerKind
	// Generation is the job's run generation, for start, end and lost:
	// only the job of the account's current generation moves it.
	Generation int64
	// Outcome is how the attempt ended, for TriggerEnd.
	Outcome *AttemptOutcome
}

// AccountFacts are what a decision about an account reads, under its
// row lock.
type AccountFacts struct {
	State      AccountState
	Generation int64 // the account's run generation
	Admitted   bool  // a queued account's job is in the queue
	StopAsked  bool  // a cancel of the account asked its running job to stop
	Retries    int   // the retries it has had in its pass
	// TaskCanceling: the task's pass is being canceled. TaskHeld: it is
	// paused with its running accounts stopped (pause and stop).
	TaskCanceling, TaskHeld bool
}

// AccountMove is the kind of change a decision makes to an account.
type AccountMove string

// The moves. MoveNone changes nothing: the trigger came from a job that
// no longer holds the account (a newer generation, a cancel, a delete).
const (
	MoveNone    AccountMove = ""
	MoveQueue   AccountMove = "queue"   // waits for admission, in a pass
	MoveStart   AccountMove = "start"   // its job runs it
	MoveEnd     AccountMove = "end"     // its attempt ended, in the outcome's state
	MoveRetry   AccountMove = "retry"   // queued again after a transient fault, after its delay
	MovePark    AccountMove = "park"    // queued again until a long pause ends (a throttle, a byte budget)
	MoveHold    AccountMove = "hold"    // queued again, to go on where it was, when its task resumes
	MoveRequeue AccountMove = "requeue" // queued again under a new generation: its process died
	MoveCancel  AccountMove = "cancel"  // canceled before its attempt started
	MoveStop    AccountMove = "stop"    // its running job is asked to stop; it ends canceled
)

// ReadyStates are the states from which an account may be queued for a
// pass: every state but those of an account in a pass.
var ReadyStates = slices.DeleteFunc(slices.Clone(AccountStates), AccountState.InPass)

// InPassStates are the states of an account in the pass under way.
var InPassStates = []AccountState{AccountQueued, AccountRunning}

// EndStates are the states in which an attempt ends.
var EndStates = []AccountState{AccountCompleted, AccountCompletedWithErrors, AccountFailed, AccountCanceled}

// accountMoves are each move's guard, the states it moves from, and the
// state it moves to; MoveEnd's is the outcome's (EndStates).
var accountMoves = map[AccountMove]struct {
	from []AccountState
	to   AccountState
}{
	MoveQueue:   {ReadyStates, AccountQueued},
	MoveStart:   {[]AccountState{AccountQueued}, AccountRunning},
	MoveEnd:     {[]AccountState{AccountRunning}, ""},
	MoveRetry:   {[]AccountState{AccountRunning}, AccountQueued},
	MovePark:    {[]AccountState{AccountRunning}, AccountQueued},
	MoveHold:    {[]AccountState{AccountRunning}, AccountQueued},
	MoveRequeue: {InPassStates, AccountQueued},
	MoveCancel:  {[]AccountState{AccountQueued}, AccountCanceled},
	MoveStop:    {[]AccountState{AccountRunning}, AccountRunning},
}

// From are the states move applies to: storage's guard.
func (m AccountMove) From() []AccountState { return accountMoves[m].from }

// To is the state move leaves an account in, but for MoveEnd, whose
// state is the outcome's.
func (m AccountMove) To() AccountState { return accountMoves[m].to }

// AccountTransition is what a trigger does to an account.
type AccountTransition struct {
	Move AccountMove
	// To is the state the account is left in (MoveNone: its own).
	To AccountState
	// RetryDelay is how long a retried account waits; Retry is which
	// retry it is, from 1.
	RetryDelay time.Duration
	Retry      int
	// ResumeAt is when a parked account may go on (a held one may at
	// once: its task's hold keeps it from being admitted).
	ResumeAt time.Time
}

// DecideAccount is the account's answer to trigger, given facts: the move
// it makes, or the refusal a client is told.
func DecideAccount(facts AccountFacts, trigger AccountTrigger) (AccountTransition, error) {
	switch trigger.Kind {
	case TriggerRun:
		if facts.State.InPass() {
			return AccountTransition{}, ErrAccountRunning
		}
		return move(MoveQueue, ""), nil
	case TriggerCancel:
		switch {
		case facts.State == AccountQueued:
			return move(MoveCancel, ""), nil
		case facts.State == AccountRunning && !facts.StopAsked:
			return move(MoveStop, ""), nil
		}
		return AccountTransition{To: facts.State}, nil
	case TriggerStart:
		if facts.State != AccountQueued || !facts.Admitted || facts.Generation != trigger.Generation {
			return AccountTransition{To: facts.State}, nil
		}
		return move(MoveStart, ""), nil
	case TriggerEnd:
		if facts.State != AccountRunning || facts.Generation != trigger.Generation || trigger.Outcome == nil {
			return AccountTransition{To: facts.State}, nil
		}
		return decideEnd(facts, *trigger.Outcome), nil
	case TriggerLost:
		switch {
		case facts.Generation != trigger.Generation:
		case facts.State == AccountRunning && (facts.TaskCanceling || facts.StopAsked):
			return move(MoveEnd, AccountCanceled), nil
		case facts.State == AccountRunning, facts.State == AccountQueued && facts.Admitted:
			return move(MoveRequeue, ""), nil
		}
		return AccountTransition{To: facts.State}, nil
	}
	return AccountTransition{}, fmt.Errorf("unknown account trigger %q", trigger.Kind)
}

// decideEnd answers the outcome of a running account's attempt. An
// account that would go on later (held, parked, retried) ends instead
// when a cancel came meanwhile: a canceling task waits for its accounts'
// ends, and an account queued again would keep it canceling.
func decideEnd(facts AccountFacts, outcome AttemptOutcome) AccountTransition {
	goesOn := !facts.StopAsked && !facts.TaskCanceling
	switch {
	case !goesOn:
	case outcome.State == AccountCanceled && facts.TaskHeld:
		return move(MoveHold, "")
	case outcome.State == AccountCanceled:
	case !outcome.ResumeAt.IsZero():
		t := move(MovePark, "")
		t.ResumeAt = outcome.ResumeAt
		return t
	case facts.Retries < len(outcome.RetryDelays):
		t := move(MoveRetry, "")
		t.Retry, t.RetryDelay = facts.Retries+1, outcome.RetryDelays[facts.Retries]
		return t
	}
	return move(MoveEnd, outcome.State)
}

// move is the transition of m, to its own state or, for MoveEnd, to.
func move(m AccountMove, to AccountState) AccountTransition {
	return AccountTransition{Move: m, To: cmp.Or(m.To(), to)}
}

// accountCase is one situation of the account's table: its facts, and
// the trigger's generation and outcome.
type accountCase struct {
	name    string
	facts   AccountFacts
	trigger AccountTrigger
}

// accountCases are the situations AccountTransitionTable shows for kind.
func accountCases(kind AccountTriggerKind) []accountCase {
	const generation = 7
	at := func(state AccountState) AccountFacts {
		return AccountFacts{State: state, Generation: generation, Admitted: state == AccountQueued}
	}
	trigger := AccountTrigger{Kind: kind, Generation: generation}
	var cases []accountCase
	switch kind {
	case TriggerRun:
		for _, state := range AccountStates {
			cases = append(cases, accountCase{string(state), at(state), trigger})
		}
	case TriggerCancel:
		stopping := at(AccountRunning)
		stopping.StopAsked = true
		cases = append(cases, accountCase{"queued", at(AccountQueued), trigger}, accountCase{"running", at(AccountRunning), trigger},
			accountCase{"running, asked to stop", stopping, trigger}, accountCase{"any other state", at(AccountCompleted), trigger})
	case TriggerStart:
		waiting := at(AccountQueued)
		waiting.Admitted = false
		cases = append(cases, accountCase{"queued, admitted, the job's generation", at(AccountQueued), trigger},
			accountCase{"queued, not admitted", waiting, trigger},
			accountCase{"queued under a newer generation", AccountFacts{State: AccountQueued, Generation: generation + 1, Admitted: true}, trigger},
			accountCase{"canceled", at(AccountCanceled), trigger})
	case TriggerEnd:
		cases = endCases(at(AccountRunning), trigger)
	case TriggerLost:
		canceling, stopping := at(AccountRunning), at(AccountRunning)
		canceling.TaskCanceling, stopping.StopAsked = true, true
		cases = append(cases, accountCase{"running", at(AccountRunning), trigger},
			accountCase{"queued, admitted (its job vanished before it started)", at(AccountQueued), trigger},
			accountCase{"running, its task canceling", canceling, trigger},
			accountCase{"running, asked to stop", stopping, trigger},
			accountCase{"under a newer generation", AccountFacts{State: AccountRunning, Generation: generation + 1}, trigger})
	}
	return cases
}

// endCases are the outcomes of a running account's attempt that the table
// shows, and the facts that change their answers.
func endCases(running AccountFacts, trigger AccountTrigger) []accountCase {
	withOutcome := func(name string, facts AccountFacts, outcome AttemptOutcome) accountCase {
		outcome.Generation = trigger.Generation
		t := trigger
		t.Outcome = &outcome
		return accountCase{name, facts, t}
	}
	retries := []time.Duration{30 * time.Second, 2 * time.Minute}
	spent, held, canceling, stopping := running, running, running, running
	spent.Retries, held.TaskHeld, canceling.TaskCanceling, stopping.StopAsked = len(retries), true, true, true
	stale := running
	stale.Generation++
	later := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return []accountCase{
		withOutcome("completed", running, AttemptOutcome{State: AccountCompleted}),
		withOutcome("completed with errors", running, AttemptOutcome{State: AccountCompletedWithErrors}),
		withOutcome("failed", running, AttemptOutcome{State: AccountFailed}),
		withOutcome("failed on a transient fault, retries left", running, AttemptOutcome{State: AccountFailed, RetryDelays: retries}),
		withOutcome("failed on a transient fault, retries spent", spent, AttemptOutcome{State: AccountFailed, RetryDelays: retries}),
		withOutcome("paused longer than an attempt waits", running, AttemptOutcome{State: AccountFailed, ResumeAt: later}),
		withOutcome("paused longer than an attempt waits, its task canceling", canceling, AttemptOutcome{State: AccountFailed, ResumeAt: later}),
		withOutcome("failed on a transient fault, asked to stop", stopping, AttemptOutcome{State: AccountFailed, RetryDelays: retries}),
		withOutcome("canceled", running, AttemptOutcome{State: AccountCanceled}),
		withOutcome("canceled by its task's hold (pause and stop)", held, AttemptOutcome{State: AccountCanceled}),
		withOutcome("of a job under an older generation", stale, AttemptOutcome{State: AccountCompleted}),
	}
}

// words says what transition does, for the table in docs/design.md.
func (t AccountTransition) words() string {
	switch t.Move {
	case MoveNone:
		return "nothing changes (the job no longer holds the account)"
	case MoveRetry:
		return "retry: → queued, after the delay of its next retry"
	case MovePark:
		return "park: → queued, admitted when the pause ends"
	case MoveHold:
		return "hold: → queued, goes on where it was when the task resumes"
	case MoveStop:
		return "stop: its job is asked to stop; it ends canceled"
	}
	return fmt.Sprintf("%s: → %s", t.Move, t.To)
}

// AccountTransitionTable is the account's state machine in words, as
// docs/design.md shows it: for each trigger, the situations grouped by
// the answer they get.
func AccountTransitionTable() string {
	var b strings.Builder
	for _, kind := range AccountTriggerKinds {
		cases := accountCases(kind)
		answered := make([]answeredCase, len(cases))
		for i, c := range cases {
			transition, err := DecideAccount(c.facts, c.trigger)
			answer := transition.words()
			if transition.Move == MoveNone && kind == TriggerCancel {
				answer = "nothing changes (not in a pass, or stopping already)"
			}
			answered[i] = answeredCase{c.name, refusedOr(err, answer)}
		}
		writeGrouped(&b, string(kind), answered)
	}
	return b.String()
}
