package migration

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestDecideTask: every command in every state of a task with accounts,
// one of which completed a pass, gets the answer the lifecycle promises:
// the state it moves to, or the refusal in its words. One column per
// state, in TaskStates order: idle, queued, running, testing, canceling,
// completed, completed_with_errors, failed, canceled.
func TestDecideTask(t *testing.T) {
	const (
		queued   = "→ queued"
		stays    = "stays"
		running  = "task is running"
		notRun   = "task is not running"
		join     = "joins"
		wait     = "waits"
		cancel   = "→ canceling"
		paused   = "paused"
		notPause = "task is not paused"
		final    = "final due"
	)
	want := map[TaskCommand][]string{
		CommandRun:          {queued, running, running, running, running, queued, queued, queued, queued},
		CommandRunSelection: {queued, join, join, running, running, queued, queued, queued, queued},
		CommandScheduleTick: {queued, wait, wait, wait, wait, queued, queued, queued, queued},
		CommandTest:         {stays, stays, stays, stays, stays, stays, stays, stays, stays},
		CommandPlan:         {stays, stays, stays, stays, stays, stays, stays, stays, stays},
		CommandCancel:       {notRun, cancel, cancel, cancel, "task is being canceled already", notRun, notRun, notRun, notRun},
		CommandCancelSome: {notRun, stays, stays, "task is not running a migration", "task is not running a migration",
			notRun, notRun, notRun, notRun},
		CommandPause:          {paused, paused, paused, paused, paused, paused, paused, paused, paused},
		CommandResume:         {notPause, notPause, notPause, notPause, notPause, notPause, notPause, notPause, notPause},
		CommandFinal:          {final, final, final, final, final, final, final, final, final},
		CommandEdit:           {stays, running, running, running, running, stays, stays, stays, stays},
		CommandImport:         {stays, stays, stays, running, running, stays, stays, stays, stays},
		CommandDeleteAccounts: {stays, running, running, running, running, stays, stays, stays, stays},
		CommandDelete:         {stays, running, running, running, running, stays, stays, stays, stays},
	}
	if len(want) != len(TaskCommands) {
		t.Fatalf("the table covers %d commands of %d", len(want), len(TaskCommands))
	}
	for _, command := range TaskCommands {
		for i, state := range TaskStates {
			got := answer(DecideTask(TaskFacts{State: state, Accounts: 3, Completed: 1}, command))
			if got != want[command][i] {
				t.Errorf("%s in %s: %q, want %q", command, state, got, want[command][i])
			}
		}
	}
}

// answer is a decision in the short words of TestDecideTask.
func answer(t TaskTransition, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case t.To != "":
		return "→ " + string(t.To)
	case t.Join:
		return "joins"
	case t.Wait:
		return "waits"
	case t.Pause:
		return "paused"
	case t.Resume:
		return "resumed"
	case t.FinalDue:
		return "final due"
	}
	return "stays"
}

// TestDecideTaskOnFacts: the facts beside the state change the answers:
// a paused task starts no pass (a schedule's waits) and resumes; a login
// test under way refuses another and is what a cancel stops; a task
// without accounts, or none that completed a pass, refuses a final pass
// in words that say why; a final pass under way refuses another.
func TestDecideTaskOnFacts(t *testing.T) {
	idle := TaskFacts{State: TaskIdle, Accounts: 3, Completed: 1}
	with := func(change func(*TaskFacts)) TaskFacts {
		f := idle
		change(&f)
		return f
	}
	pausedIdle := with(func(f *TaskFacts) { f.Paused = true })
	pausedRunning := with(func(f *TaskFacts) { f.Paused, f.State = true, TaskRunning })
	testing := with(func(f *TaskFacts) { f.TestRunning = true })
	testingBesideRun := with(func(f *TaskFacts) { f.TestRunning, f.State = true, TaskRunning })
	testingWhileCanceling := with(func(f *TaskFacts) { f.TestRunning, f.State = true, TaskCanceling })
	empty := TaskFacts{State: TaskIdle}
	neverCompleted := with(func(f *TaskFacts) { f.Completed = 0 })
	runningNeverCompleted := with(func(f *TaskFacts) { f.Completed, f.State = 0, TaskRunning })
	finalUnderWay := with(func(f *TaskFacts) { f.FinalUnderWay, f.State = true, TaskRunning })

	for _, c := range []struct {
		name    string
		facts   TaskFacts
		command TaskCommand
		want    string
		wantErr error
	}{
		{"run, paused", pausedIdle, CommandRun, "", ErrTaskPaused},
		{"selection, paused mid-pass", pausedRunning, CommandRunSelection, "", ErrTaskPaused},
		{"tick, paused", pausedIdle, CommandScheduleTick, "waits", nil},
		{"resume, paused", pausedIdle, CommandResume, "resumed", nil},
		{"pause, paused", pausedRunning, CommandPause, "", ErrTaskPaused},
		{"final, paused", pausedIdle, CommandFinal, "", ErrTaskPaused},
		{"test beside a test", testing, CommandTest, "", ErrTestRunning},
		{"run beside a test", testing, CommandRun, "→ queued", nil},
		{"edit beside a test", testing, CommandEdit, "stays", nil},
		{"cancel of a test alone", testing, CommandCancel, "stops test", nil},
		{"cancel of a pass and its test", testingBesideRun, CommandCancel, "→ canceling, stops test", nil},
		{"cancel of a test while canceling", testingWhileCanceling, CommandCancel, "stops test", nil},
		{"run without accounts", empty, CommandRun, "", ErrNoAccounts},
		{"tick without accounts", empty, CommandScheduleTick, "", ErrNoAccounts},
		{"test without accounts", empty, CommandTest, "", ErrNoAccounts},
		{"plan without accounts", empty, CommandPlan, "", ErrNoAccounts},
		{"final without accounts", empty, CommandFinal, "", ErrFinalWithoutAccounts},
		{"final before a pass", neverCompleted, CommandFinal, "", ErrFinalBeforeAPass},
		{"final during the first pass", runningNeverCompleted, CommandFinal, "final due", nil},
		{"final during the final pass", finalUnderWay, CommandFinal, "", ErrFinalPassRunning},
		{"delete without accounts", empty, CommandDelete, "stays", nil},
	} {
		transition, err := DecideTask(c.facts, c.command)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
			}
			if kind, _ := KindOf(err); kind != KindConflict {
				t.Errorf("%s: the refusal %q is not a conflict", c.name, err)
			}
			continue
		}
		got := answer(transition, err)
		switch {
		case transition.StopsTest && got == "stays":
			got = "stops test"
		case transition.StopsTest:
			got += ", stops test"
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := DecideTask(idle, TaskCommand("reboot")); err == nil {
		t.Error("an unknown command was accepted")
	}
}

// TestDesignShowsTheTransitionTable: docs/design.md shows the task's
// state machine as the code decides it.
func TestDesignShowsTheTransitionTable(t *testing.T) {
	if shown, want := designSection(t, "task-transitions"), TransitionTable(); shown != want {
		t.Errorf("docs/design.md's transition table differs from migration.TransitionTable(); put this between its markers:\n%s", want)
	}
}

// designSection is what docs/design.md holds between the markers
// <!-- name --> and <!-- /name -->.
func designSection(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+" -->\n", "<!-- /"+name+" -->"
	_, rest, ok := strings.Cut(string(data), begin)
	shown, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/design.md lacks the markers %q and %q", begin, end)
	}
	return shown
}

// TestReadsPassFacts: storage reads the facts of a task's passes only for
// the commands ReadsPassFacts names; every other command answers the same
// whatever they are, in every state.
func TestReadsPassFacts(t *testing.T) {
	for _, command := range TaskCommands {
		if ReadsPassFacts(command) {
			continue
		}
		for _, state := range TaskStates {
			without := TaskFacts{State: state, Accounts: 3}
			with := TaskFacts{State: state, Accounts: 3, Completed: 3, FinalUnderWay: true}
			a, errA := DecideTask(without, command)
			b, errB := DecideTask(with, command)
			if a != b || !errors.Is(errA, errB) && !errors.Is(errB, errA) {
				t.Errorf("%s in %s answers %+v %v without the passes' facts and %+v %v with them", command, state, a, errA, b, errB)
			}
		}
	}
}
