package migration

import (
	"fmt"
	"slices"
	"strings"
)

// The task's state machine (docs/design.md#the-task-state-machine): what
// each command does to a task in each state, decided by one pure
// function from the facts storage reads under the task's lock. Storage
// applies the transition; it decides nothing itself.

// TaskCommand is what a person, the API, or a schedule asks of a task.
type TaskCommand string

// The commands a task answers.
const (
	CommandRun            TaskCommand = "run"           // a pass of the whole task
	CommandRunSelection   TaskCommand = "run_selection" // a pass of some accounts, or they join the pass under way
	CommandScheduleTick   TaskCommand = "schedule_tick" // a schedule's pass came due
	CommandTest           TaskCommand = "test"          // a login test, beside anything
	CommandPlan           TaskCommand = "plan"          // a dry run, beside anything
	CommandCancel         TaskCommand = "cancel"        // stop the pass under way, or the login test
	CommandCancelSome     TaskCommand = "cancel_some"   // stop some accounts of the pass under way
	CommandPause          TaskCommand = "pause"         // no pass starts (and, held, the one under way waits)
	CommandResume         TaskCommand = "resume"
	CommandFinal          TaskCommand = "final"  // the final pass, now or after the pass under way
	CommandEdit           TaskCommand = "edit"   // the task's name, servers or options
	CommandImport         TaskCommand = "import" // add accounts, or change one
	CommandDeleteAccounts TaskCommand = "delete_accounts"
	CommandDelete         TaskCommand = "delete"
)

// TaskCommands are every TaskCommand, in the order docs/design.md lists them.
var TaskCommands = []TaskCommand{CommandRun, CommandRunSelection, CommandScheduleTick, CommandTest, CommandPlan,
	CommandCancel, CommandCancelSome, CommandPause, CommandResume, CommandFinal, CommandEdit, CommandImport, CommandDeleteAccounts, CommandDelete}

// CancelableTaskStates are the states a cancel moves to TaskCanceling.
var CancelableTaskStates = []TaskState{TaskQueued, TaskRunning, TaskTesting}

// ReadsPassFacts reports whether the decision on command reads the facts
// of the task's passes (TaskFacts.Completed, FinalUnderWay): only the
// final pass does; storage leaves them zero for the others.
func ReadsPassFacts(command TaskCommand) bool { return command == CommandFinal }

// TaskFacts are what a decision about a task reads, under its lock.
type TaskFacts struct {
	State       TaskState
	Paused      bool
	TestRunning bool  // a login test is under way
	Accounts    int64 // the task's accounts
	// Completed is how many accounts completed a pass before
	// (CompletedPassStates).
	Completed int64
	// FinalUnderWay: the pass under way is the task's final pass.
	FinalUnderWay bool
}

// TaskTransition is what a command does to a task that accepts it.
type TaskTransition struct {
	// To is the state the task moves to; empty when it keeps its state.
	To TaskState
	// Join: the selected accounts join the pass under way.
	Join bool
	// Wait: a scheduled pass waits, due still, until the task is free.
	Wait bool
	// StopsTest: a cancel stops the login test under way (alone, or with
	// the pass it ran beside).
	StopsTest bool
	// Pause or Resume change whether passes may start.
	Pause, Resume bool
	// FinalDue: the final pass is due now, or after the pass under way.
	FinalDue bool
}

// DecideTask is the task's answer to command, given facts: the
// transition it makes, or the refusal a client is told.
func DecideTask(facts TaskFacts, command TaskCommand) (TaskTransition, error) {
	state := facts.State
	switch command {
	case CommandRun, CommandRunSelection, CommandScheduleTick:
		return decidePass(facts, command)
	case CommandTest:
		switch {
		case facts.TestRunning:
			return TaskTransition{}, ErrTestRunning
		case facts.Accounts == 0:
			return TaskTransition{}, ErrNoAccounts
		}
		return TaskTransition{}, nil
	case CommandPlan:
		if facts.Accounts == 0 {
			return TaskTransition{}, ErrNoAccounts
		}
		return TaskTransition{}, nil
	case CommandCancel:
		switch {
		case state == TaskCanceling && facts.TestRunning:
			return TaskTransition{StopsTest: true}, nil
		case state == TaskCanceling:
			return TaskTransition{}, ErrTaskCanceling
		case slices.Contains(CancelableTaskStates, state):
			return TaskTransition{To: TaskCanceling, StopsTest: facts.TestRunning}, nil
		case facts.TestRunning:
			return TaskTransition{StopsTest: true}, nil
		}
		return TaskTransition{}, ErrTaskNotRunning
	case CommandCancelSome:
		switch {
		case !state.Running():
			return TaskTransition{}, ErrTaskNotRunning
		case !state.Migrating():
			return TaskTransition{}, ErrNoMigrationRunning
		}
		return TaskTransition{}, nil
	case CommandPause:
		if facts.Paused {
			return TaskTransition{}, ErrTaskPaused
		}
		return TaskTransition{Pause: true}, nil
	case CommandResume:
		if !facts.Paused {
			return TaskTransition{}, ErrTaskNotPaused
		}
		return TaskTransition{Resume: true}, nil
	case CommandFinal:
		switch {
		case facts.Paused:
			return TaskTransition{}, ErrTaskPaused
		case facts.FinalUnderWay && state.Running():
			return TaskTransition{}, ErrFinalPassRunning
		}
		if err := FinalPassRefusal(facts.Accounts, facts.Completed, state.Running()); err != nil {
			return TaskTransition{}, err
		}
		return TaskTransition{FinalDue: true}, nil
	case CommandEdit, CommandDeleteAccounts, CommandDelete:
		if state.Running() {
			return TaskTransition{}, ErrTaskRunning
		}
		return TaskTransition{}, nil
	case CommandImport:
		// Accounts may join a migration under way, not a cancel.
		if state.Running() && !state.Migrating() {
			return TaskTransition{}, ErrTaskRunning
		}
		return TaskTransition{}, nil
	}
	return TaskTransition{}, fmt.Errorf("unknown task command %q", command)
}

// decidePass answers a command that starts a pass.
func decidePass(facts TaskFacts, command TaskCommand) (TaskTransition, error) {
	state := facts.State
	busy := facts.Paused || state.Running()
	switch {
	case command == CommandScheduleTick && busy:
		return TaskTransition{Wait: true}, nil
	case facts.Paused:
		return TaskTransition{}, ErrTaskPaused
	case command == CommandRunSelection && state.Migrating():
		return TaskTransition{Join: true}, nil
	case state.Running():
		return TaskTransition{}, ErrTaskRunning
	case facts.Accounts == 0:
		return TaskTransition{}, ErrNoAccounts
	}
	return TaskTransition{To: TaskQueued}, nil
}

// TaskPassEnd is the transition of a task whose pass's last account
// ended: to the state its accounts give together (PassEndState).
func TaskPassEnd(state TaskState, accounts AccountCounts) TaskTransition {
	return TaskTransition{To: PassEndState(state == TaskCanceling, accounts)}
}

// ErrTaskCanceling refuses to cancel a task whose pass is being canceled
// already: its accounts are stopping.
var ErrTaskCanceling = conflict("task is being canceled already")

// acceptedWords say what a command accepted does when it changes no
// state.
var acceptedWords = map[TaskCommand]string{
	CommandTest:           "the test runs beside; the state stays",
	CommandPlan:           "the plan runs beside; the state stays",
	CommandCancelSome:     "the selected accounts stop; the state stays",
	CommandEdit:           "changed; the state stays",
	CommandImport:         "accounts added or changed; the state stays",
	CommandDeleteAccounts: "accounts deleted; the state stays",
	CommandDelete:         "deleted, with its accounts",
}

// words says what a transition of command does, for the table in
// docs/design.md.
func (t TaskTransition) words(command TaskCommand) string {
	var parts []string
	switch {
	case t.To != "":
		parts = append(parts, "→ "+string(t.To))
	case t.Join:
		parts = append(parts, "joins the pass under way")
	case t.Wait:
		parts = append(parts, "waits, still due")
	case t.Pause:
		parts = append(parts, "paused")
	case t.Resume:
		parts = append(parts, "resumed")
	case t.FinalDue:
		parts = append(parts, "the final pass is due (it begins when no pass is under way)")
	}
	if t.StopsTest {
		parts = append(parts, "stops the login test")
	}
	if len(parts) == 0 {
		return acceptedWords[command]
	}
	return strings.Join(parts, ", ")
}

// transitionCase is one situation of the table: a state with facts.
type transitionCase struct {
	name  string
	facts TaskFacts
}

// transitionCases are the situations TransitionTable shows: each state
// of a task with accounts, one of which completed a pass, and then the
// facts that change the answers.
func transitionCases() []transitionCase {
	var cases []transitionCase
	for _, state := range TaskStates {
		cases = append(cases, transitionCase{string(state), TaskFacts{State: state, Accounts: 3, Completed: 1}})
	}
	return append(cases,
		transitionCase{"idle, paused", TaskFacts{State: TaskIdle, Paused: true, Accounts: 3, Completed: 1}},
		transitionCase{"running, paused", TaskFacts{State: TaskRunning, Paused: true, Accounts: 3, Completed: 1}},
		transitionCase{"idle, a login test under way", TaskFacts{State: TaskIdle, TestRunning: true, Accounts: 3, Completed: 1}},
		transitionCase{"running, a login test under way", TaskFacts{State: TaskRunning, TestRunning: true, Accounts: 3, Completed: 1}},
		transitionCase{"idle, no accounts", TaskFacts{State: TaskIdle}},
		transitionCase{"idle, no account completed a pass", TaskFacts{State: TaskIdle, Accounts: 3}},
		transitionCase{"running its final pass", TaskFacts{State: TaskRunning, Accounts: 3, Completed: 1, FinalUnderWay: true}},
	)
}

// TransitionTable is the task's state machine in words, as
// docs/design.md shows it: for each command, the situations grouped by
// the answer they get.
func TransitionTable() string {
	var b strings.Builder
	cases := transitionCases()
	for _, command := range TaskCommands {
		answered := make([]answeredCase, len(cases))
		for i, c := range cases {
			transition, err := DecideTask(c.facts, command)
			answered[i] = answeredCase{c.name, refusedOr(err, transition.words(command))}
		}
		writeGrouped(&b, string(command), answered)
	}
	return b.String()
}

// answeredCase is a situation of a transition table, and its answer in
// words.
type answeredCase struct{ name, answer string }

// refusedOr is the words of a refusal err, else answer.
func refusedOr(err error, answer string) string {
	if err != nil {
		return fmt.Sprintf("refused: %q", err.Error())
	}
	return answer
}

// writeGrouped writes one command's situations to b, grouped by the
// answer they get, the answers in the order they first come.
func writeGrouped(b *strings.Builder, command string, cases []answeredCase) {
	fmt.Fprintf(b, "- `%s`:\n", command)
	var answers []string
	byAnswer := map[string][]string{}
	for _, c := range cases {
		if !slices.Contains(answers, c.answer) {
			answers = append(answers, c.answer)
		}
		byAnswer[c.answer] = append(byAnswer[c.answer], c.name)
	}
	for _, answer := range answers {
		fmt.Fprintf(b, "  - %s: %s\n", strings.Join(byAnswer[answer], "; "), answer)
	}
}
