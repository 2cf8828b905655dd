package cli

import (
	"context"
	"fmt"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// summary prints how the followed pass or test ended, and fails when it
// did not end well: some account not completed, or some login refused.
func (f *follower) summary(ctx context.Context) error {
	accounts, err := listAccounts(ctx, f.s, f.taskID)
	if err != nil {
		return err
	}
	task := f.board.task
	if f.s.output == "json" {
		if err := f.s.printJSON(struct {
			Task     api.Task      `json:"task"`
			Accounts []api.Account `json:"accounts"`
		}{task, accounts}); err != nil {
			return err
		}
	}
	if f.testing {
		return f.testSummary(task, accounts)
	}
	return f.runSummary(task, accounts)
}

func (f *follower) runSummary(task api.Task, accounts []api.Account) error {
	var unfinished []api.Account
	for _, a := range accounts {
		if a.State != api.AccountStateCompleted && a.State != api.AccountStateIdle {
			unfinished = append(unfinished, a)
		}
	}
	if f.s.output == "table" {
		if err := f.printUnfinished(unfinished); err != nil {
			return err
		}
		fmt.Fprintf(f.s.sys.Stdout, "task %d %s%s: accounts %s; messages %d copied, %d skipped, %d failed; %s MB\n",
			task.Id, task.State, tookText(task), accountCountsText(task.Accounts),
			task.Totals.MessagesCopied, task.Totals.MessagesSkipped, task.Totals.MessagesFailed, megabytes(task.Totals.BytesCopied))
	}
	if task.State == api.TaskStateCompleted || task.State == api.TaskStateIdle {
		return nil
	}
	return &unfinishedError{reason: fmt.Sprintf("task %d ended %s: %d of %d accounts not completed", task.Id, task.State, len(unfinished), len(accounts))}
}

func (f *follower) printUnfinished(accounts []api.Account) error {
	if len(accounts) == 0 {
		return nil
	}
	rows := make([][]string, 0, len(accounts))
	for _, a := range accounts {
		p := a.Progress
		rows = append(rows, []string{itoa(a.Id), a.SourceLogin, string(a.State), itoa(p.MessagesCopied), itoa(p.MessagesSkipped),
			itoa(p.MessagesFailed), megabytes(p.BytesCopied), orDash(a.LastError)})
	}
	return f.s.printTable([]string{"ID", "SOURCE LOGIN", "STATE", "COPIED", "SKIPPED", "FAILED", "MB", "LAST ERROR"}, rows)
}

// tookText is " in 1m2s" for a task that started and finished.
func tookText(t api.Task) string {
	if t.StartedAt == nil || t.FinishedAt == nil || t.FinishedAt.Before(*t.StartedAt) {
		return ""
	}
	return " in " + durationText(t.FinishedAt.Sub(*t.StartedAt))
}

func (f *follower) testSummary(task api.Task, accounts []api.Account) error {
	var refused []api.Account
	working := 0
	for _, a := range accounts {
		switch {
		case testFailed(a.SourceTest) || testFailed(a.DestinationTest):
			refused = append(refused, a)
		case a.SourceTest != nil && a.DestinationTest != nil:
			working++
		}
	}
	if f.s.output == "table" {
		if err := printTests(f.s, refused); err != nil {
			return err
		}
		fmt.Fprintf(f.s.sys.Stdout, "task %d: %s\n", task.Id, testCounts(working, len(refused), len(accounts)))
	}
	if len(refused) == 0 {
		return nil
	}
	return &unfinishedError{reason: fmt.Sprintf("task %d: the login test failed for %d of %d accounts", task.Id, len(refused), len(accounts))}
}

// testCounts says how a task's logins stand: an account counts as working
// only once both its sides were tested and logged in.
func testCounts(working, refused, accounts int) string {
	words := fmt.Sprintf("logins of %d of %d accounts work on both sides", working, accounts)
	if refused > 0 {
		words += fmt.Sprintf(", %d refused", refused)
	}
	if untested := accounts - working - refused; untested > 0 {
		words += fmt.Sprintf(", %d not tested", untested)
	}
	return words
}

func testFailed(t *api.TestResult) bool { return t != nil && !t.Ok }

func printTests(s *session, accounts []api.Account) error {
	if len(accounts) == 0 {
		return nil
	}
	rows := make([][]string, 0, len(accounts))
	for _, a := range accounts {
		rows = append(rows, []string{itoa(a.Id), a.SourceLogin, testText(a.SourceTest), a.DestinationLogin, testText(a.DestinationTest)})
	}
	return s.printTable([]string{"ID", "SOURCE LOGIN", "SOURCE TEST", "DESTINATION LOGIN", "DESTINATION TEST"}, rows)
}

// testText is a side's last login test: "ok", "failed: <server's words>"
// or "-" when never tested.
func testText(t *api.TestResult) string {
	switch {
	case t == nil:
		return "-"
	case t.Ok:
		return "ok"
	default:
		return "failed: " + t.Error
	}
}
