package migration

import (
	"slices"
	"testing"
	"time"
)

// TestDecideAccountRun: an account in a run is refused in words; any
// other is queued.
func TestDecideAccountRun(t *testing.T) {
	for _, state := range AccountStates {
		got, err := DecideAccount(AccountFacts{State: state}, AccountTrigger{Kind: TriggerRun})
		switch {
		case state.InPass() && (err == nil || err.Error() != "account is running"):
			t.Errorf("run of a %s account: %v, want refused as running", state, err)
		case !state.InPass() && (err != nil || got.Move != MoveQueue || got.To != AccountQueued):
			t.Errorf("run of a %s account: %+v, %v; want queued", state, got, err)
		}
	}
}

// TestDecideAccountEnd: how a run ended decides what becomes of its
// account: ended in the outcome's state, retried while retries remain,
// parked until a long pause ends, held while its task is paused with
// stop; and never queued again once a cancel came, since the canceling
// task waits for its accounts' ends.
func TestDecideAccountEnd(t *testing.T) {
	const generation = 4
	delays := []time.Duration{time.Second, time.Minute}
	later := time.Now().Add(time.Hour)
	running := AccountFacts{State: AccountRunning, Generation: generation}
	with := func(change func(*AccountFacts)) AccountFacts {
		f := running
		change(&f)
		return f
	}
	cases := []struct {
		name    string
		facts   AccountFacts
		outcome AttemptOutcome
		want    AccountTransition
	}{
		{"completed", running, AttemptOutcome{State: AccountCompleted},
			AccountTransition{Move: MoveEnd, To: AccountCompleted}},
		{"with errors", running, AttemptOutcome{State: AccountCompletedWithErrors},
			AccountTransition{Move: MoveEnd, To: AccountCompletedWithErrors}},
		{"failed for good", running, AttemptOutcome{State: AccountFailed},
			AccountTransition{Move: MoveEnd, To: AccountFailed}},
		{"first retry", running, AttemptOutcome{State: AccountFailed, RetryDelays: delays},
			AccountTransition{Move: MoveRetry, To: AccountQueued, Retry: 1, RetryDelay: time.Second}},
		{"second retry", with(func(f *AccountFacts) { f.Retries = 1 }), AttemptOutcome{State: AccountFailed, RetryDelays: delays},
			AccountTransition{Move: MoveRetry, To: AccountQueued, Retry: 2, RetryDelay: time.Minute}},
		{"retries spent", with(func(f *AccountFacts) { f.Retries = 2 }), AttemptOutcome{State: AccountFailed, RetryDelays: delays},
			AccountTransition{Move: MoveEnd, To: AccountFailed}},
		{"retry asked to stop", with(func(f *AccountFacts) { f.StopAsked = true }), AttemptOutcome{State: AccountFailed, RetryDelays: delays},
			AccountTransition{Move: MoveEnd, To: AccountFailed}},
		{"retry while the task cancels", with(func(f *AccountFacts) { f.TaskCanceling = true }), AttemptOutcome{State: AccountFailed, RetryDelays: delays},
			AccountTransition{Move: MoveEnd, To: AccountFailed}},
		{"long pause", running, AttemptOutcome{State: AccountFailed, ResumeAt: later},
			AccountTransition{Move: MovePark, To: AccountQueued, ResumeAt: later}},
		{"long pause while the task cancels", with(func(f *AccountFacts) { f.TaskCanceling = true }), AttemptOutcome{State: AccountFailed, ResumeAt: later},
			AccountTransition{Move: MoveEnd, To: AccountFailed}},
		{"canceled", running, AttemptOutcome{State: AccountCanceled},
			AccountTransition{Move: MoveEnd, To: AccountCanceled}},
		{"stopped by its task's hold", with(func(f *AccountFacts) { f.TaskHeld = true }), AttemptOutcome{State: AccountCanceled},
			AccountTransition{Move: MoveHold, To: AccountQueued}},
		{"held, but asked to stop itself", with(func(f *AccountFacts) { f.TaskHeld, f.StopAsked = true, true }), AttemptOutcome{State: AccountCanceled},
			AccountTransition{Move: MoveEnd, To: AccountCanceled}},
		{"held, but the task cancels", with(func(f *AccountFacts) { f.TaskHeld, f.TaskCanceling = true, true }), AttemptOutcome{State: AccountCanceled},
			AccountTransition{Move: MoveEnd, To: AccountCanceled}},
		{"completed while held", with(func(f *AccountFacts) { f.TaskHeld = true }), AttemptOutcome{State: AccountCompleted},
			AccountTransition{Move: MoveEnd, To: AccountCompleted}},
		{"an older generation's", with(func(f *AccountFacts) { f.Generation++ }), AttemptOutcome{State: AccountCompleted},
			AccountTransition{To: AccountRunning}},
		{"an account queued again meanwhile", with(func(f *AccountFacts) { f.State = AccountQueued }), AttemptOutcome{State: AccountCompleted},
			AccountTransition{To: AccountQueued}},
	}
	for _, c := range cases {
		outcome := c.outcome
		outcome.Generation = generation
		got, err := DecideAccount(c.facts, AccountTrigger{Kind: TriggerEnd, Generation: generation, Outcome: &outcome})
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// TestDecideAccountJobs: only the job of the account's generation starts
// it, and only an admitted one; a dead process's account is queued again,
// or ends canceled when a cancel was under way.
func TestDecideAccountJobs(t *testing.T) {
	const generation = 9
	cases := []struct {
		name  string
		facts AccountFacts
		kind  AccountTriggerKind
		want  AccountMove
	}{
		{"start admitted", AccountFacts{State: AccountQueued, Generation: generation, Admitted: true}, TriggerStart, MoveStart},
		{"start waiting", AccountFacts{State: AccountQueued, Generation: generation}, TriggerStart, MoveNone},
		{"start a newer generation", AccountFacts{State: AccountQueued, Generation: generation + 1, Admitted: true}, TriggerStart, MoveNone},
		{"start canceled", AccountFacts{State: AccountCanceled, Generation: generation}, TriggerStart, MoveNone},
		{"lost running", AccountFacts{State: AccountRunning, Generation: generation}, TriggerLost, MoveRequeue},
		{"lost before it started", AccountFacts{State: AccountQueued, Generation: generation, Admitted: true}, TriggerLost, MoveRequeue},
		{"lost while waiting", AccountFacts{State: AccountQueued, Generation: generation}, TriggerLost, MoveNone},
		{"lost, task canceling", AccountFacts{State: AccountRunning, Generation: generation, TaskCanceling: true}, TriggerLost, MoveEnd},
		{"lost, asked to stop", AccountFacts{State: AccountRunning, Generation: generation, StopAsked: true}, TriggerLost, MoveEnd},
		{"lost, newer generation", AccountFacts{State: AccountRunning, Generation: generation + 1}, TriggerLost, MoveNone},
		{"lost, ended meanwhile", AccountFacts{State: AccountCompleted, Generation: generation}, TriggerLost, MoveNone},
		{"cancel queued", AccountFacts{State: AccountQueued}, TriggerCancel, MoveCancel},
		{"cancel running", AccountFacts{State: AccountRunning}, TriggerCancel, MoveStop},
		{"cancel stopping", AccountFacts{State: AccountRunning, StopAsked: true}, TriggerCancel, MoveNone},
		{"cancel ended", AccountFacts{State: AccountFailed}, TriggerCancel, MoveNone},
	}
	for _, c := range cases {
		got, err := DecideAccount(c.facts, AccountTrigger{Kind: c.kind, Generation: generation})
		if err != nil || got.Move != c.want {
			t.Errorf("%s: %+v, %v; want %q", c.name, got, err, c.want)
		}
		if got.Move == MoveEnd && got.To != AccountCanceled {
			t.Errorf("%s: ends %s, want canceled", c.name, got.To)
		}
		if got.Move != MoveNone && !slices.Contains(got.Move.From(), c.facts.State) {
			t.Errorf("%s: %s moves from %s, which its guard %v leaves out: storage would change nothing",
				c.name, got.Move, c.facts.State, got.Move.From())
		}
	}
	if _, err := DecideAccount(AccountFacts{}, AccountTrigger{Kind: "reboot"}); err == nil {
		t.Error("an unknown trigger was accepted")
	}
}

// TestAccountMoveGuards: the states a run is in and those it can be
// queued from divide the account's states; every move has a guard, and
// moves only to a state the API knows.
func TestAccountMoveGuards(t *testing.T) {
	all := slices.Concat(ReadyStates, InPassStates)
	slices.Sort(all)
	want := slices.Clone(AccountStates)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Errorf("ReadyStates and InPassStates hold %v, want each of %v once", all, want)
	}
	for _, state := range InPassStates {
		if !state.InPass() {
			t.Errorf("%s is in InPassStates but not InPass", state)
		}
	}
	for m := range accountMoves {
		if len(m.From()) == 0 {
			t.Errorf("%s has no guard", m)
		}
		if m != MoveEnd && !slices.Contains(AccountStates, m.To()) {
			t.Errorf("%s moves to %q, no account state", m, m.To())
		}
	}
	for _, state := range EndStates {
		if !slices.Contains(ReadyStates, state) {
			t.Errorf("a run ends in %s, from which no pass can queue it again", state)
		}
	}
}

// TestDesignShowsTheAccountTransitionTable: docs/design.md shows the
// account's state machine as the code decides it.
func TestDesignShowsTheAccountTransitionTable(t *testing.T) {
	if shown, want := designSection(t, "account-transitions"), AccountTransitionTable(); shown != want {
		t.Errorf("docs/design.md's account transition table differs from migration.AccountTransitionTable(); put this between its markers:\n%s", want)
	}
}
