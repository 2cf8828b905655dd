package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// TestPauseAndStopHoldsThePass: "pause and stop" in the middle of a pass
// stops its running accounts between messages, as paused, not canceled:
// none fails, no account.failed or run.canceled is logged (so no webhook
// or mail says so), each stopped account logs account.held with its
// figures, none starts while the task is paused, and on resume the same
// pass goes on and ends with every message copied once.
func TestPauseAndStopHoldsThePass(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{MaxWorkers: 4, Workers: worker.Options{LeaseRenewal: 100 * time.Millisecond}})
	ctx := context.Background()
	users := map[string]string{"ann": "a", "bob": "b", "cyd": "c", "dee": "d"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	var csv string
	for i, login := range []string{"ann", "bob", "cyd", "dee"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 20}))
		csv += login + "," + users[login] + "\n"
	}
	host, port := imaptest.SlowProxy(t, old.Addr(), 60_000) // a pass takes seconds
	taskID := createTask(t, s, createEndpoint(t, s, host, port), createEndpoint(t, s, neu.Host, neu.Port), `{"parallel_accounts": 2}`)
	importAccounts(t, s, taskID, csv)
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	waitAccountStates(t, s, taskID, "an account running", func(byState map[api.AccountState]int) bool { return byState[api.AccountStateRunning] > 0 })

	if resp, err := s.Client.PauseTaskWithResponse(ctx, taskID, api.PauseInput{Stop: true}); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("pause and stop: %v %v", err, resp)
	}
	waitAccountStates(t, s, taskID, "no account running", func(byState map[api.AccountState]int) bool { return byState[api.AccountStateRunning] == 0 })
	time.Sleep(500 * time.Millisecond) // five renewals: none starts while held
	byState := accountStates(t, s, taskID)
	if byState[api.AccountStateRunning] != 0 || byState[api.AccountStateCanceled] != 0 || byState[api.AccountStateFailed] != 0 ||
		byState[api.AccountStateQueued] == 0 {
		t.Errorf("accounts while the pass is held: %v, want queued (and completed), none running, canceled or failed", byState)
	}
	for _, e := range taskEvents(t, s, taskID) {
		if e.Kind == api.EventKindAccountFailed || e.Kind == api.EventKindRunCanceled || e.Kind == api.EventKindRunFinished {
			t.Errorf("while held: %s %q", e.Kind, e.Message)
		}
	}
	if !hasEventSaying(taskEvents(t, s, taskID), "the pass under way is held") {
		t.Error("the log does not say the pass is held")
	}
	// Each account it stopped says so, with the figures it stopped at,
	// which its row shows too.
	resp, err := s.Client.ListAccountsWithResponse(ctx, taskID, nil)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("accounts: %v %v", err, resp)
	}
	accounts := map[int64]api.Account{}
	for _, a := range *resp.JSON200 {
		accounts[a.Id] = a
	}
	held := 0
	for _, e := range taskEvents(t, s, taskID) {
		if e.Kind != api.EventKindAccountHeld {
			continue
		}
		held++
		a := accounts[e.AccountId]
		if a.State != api.AccountStateQueued || e.MessagesCopied == nil || *e.MessagesCopied != a.Progress.MessagesCopied ||
			!strings.Contains(e.Message, "held after") {
			t.Errorf("held: %q with %v copied; the account is %s with %d copied", e.Message, e.MessagesCopied, a.State, a.Progress.MessagesCopied)
		}
	}
	if held == 0 {
		t.Error("no account.held event tells which accounts the stop held")
	}

	if resp, err := s.Client.ResumeTaskWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("resume: %v %v", err, resp)
	}
	task := servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	if task.Accounts.Completed != int64(len(users)) {
		t.Errorf("accounts after resume: %+v, want all completed", task.Accounts)
	}
	if passes := taskPasses(t, s, taskID); len(passes) != 1 {
		t.Errorf("%d passes, want the one that was held and went on", len(passes))
	}
	for login := range users {
		if got, want := len(neu.Read(t, login).Messages), len(old.Read(t, login).Messages); got != want {
			t.Errorf("%s: %d messages on the destination, want the source's %d, each once", login, got, want)
		}
	}
}

// accountStates counts a task's accounts by state.
func accountStates(t *testing.T, s *servicetest.Service, taskID int64) map[api.AccountState]int {
	t.Helper()
	resp, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, nil)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("accounts: %v %v", err, resp)
	}
	byState := map[api.AccountState]int{}
	for _, a := range *resp.JSON200 {
		byState[a.State]++
	}
	return byState
}

// waitAccountStates waits until the task's accounts by state satisfy ok.
func waitAccountStates(t *testing.T, s *servicetest.Service, taskID int64, what string, ok func(map[api.AccountState]int) bool) {
	t.Helper()
	testsupport.Eventually(t, 30*time.Second, func() error {
		if byState := accountStates(t, s, taskID); !ok(byState) {
			return fmt.Errorf("waiting for %s: %v", what, byState)
		}
		return nil
	})
}
