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
)

// TestAccountsAreAtHandWhileOthersRun: while two large mailboxes copy,
// the operator waits for neither. An account queued behind them is
// canceled at once, one of the two is canceled on its own while the other
// goes on, a wrong password is fixed and that account retried, another
// account is run and a new one added, all in the pass under way (one
// pass). What the spec keeps from a running task (deleting it or its
// accounts) and what would disturb a running account (changing it,
// running it twice) stay refused.
func TestAccountsAreAtHandWhileOthersRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := servicetest.Start(t, servicetest.Options{})
	users := map[string]string{"big1": "pw", "big2": "pw", "ann": "pw", "bob": "pw", "cid": "pw", "dan": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	for i, login := range []string{"big1", "big2"} {
		// Through the slow source below, each takes minutes.
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), LargeMessages: 1, LargeSize: 2 << 20}))
	}
	for _, login := range []string{"ann", "bob", "cid"} {
		old.Load(t, login, smallInbox(login, 3))
	}
	host, port := imaptest.SlowProxy(t, old.Addr(), 20_000)
	taskID := createTask(t, s, createEndpoint(t, s, host, port), createEndpoint(t, s, neu.Host, neu.Port), `{"parallel_accounts":2}`)
	importAccounts(t, s, taskID, "big1,pw\nbig2,pw\nann,wrong\nbob,pw\ncid,pw\n")
	id := accountIDs(t, s, taskID)

	wantAnswer := func(what string, status int, body string, code int, want string) {
		t.Helper()
		if status != code || (want != "" && strings.TrimSpace(body) != want) {
			t.Errorf("%s: %d %q, want %d %q", what, status, body, code, want)
		}
	}
	run := func(sel api.AccountSelection) (int, string) {
		resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, sel)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode(), string(resp.Body)
	}
	cancel := func(sel api.AccountSelection) (int, string) {
		resp, err := s.Client.CancelTaskWithResponse(ctx, taskID, sel)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode(), string(resp.Body)
	}
	accountState := func(login string) api.AccountState {
		resp, err := s.Client.GetAccountWithResponse(ctx, taskID, id[login])
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("get %s: %v %v", login, err, resp)
		}
		return resp.JSON200.State
	}

	status, body := cancel(api.AccountSelection{Q: "big"})
	wantAnswer("cancel some accounts of an idle task", status, body, http.StatusConflict, "task is not running")
	status, body = run(api.AccountSelection{Q: "big"})
	wantAnswer("run the big ones", status, body, http.StatusAccepted, `{"accounts":2}`)
	waitAccounts(t, s, taskID, func(c api.AccountCounts) bool { return c.Running == 2 })

	// Refused while the task runs.
	status, body = run(api.AccountSelection{})
	wantAnswer("run the whole task", status, body, http.StatusConflict, "task is running")
	status, body = run(api.AccountSelection{Ids: []int64{id["big1"]}})
	wantAnswer("run a running account", status, body, http.StatusConflict, "no account of the task matches")
	if resp, err := s.Client.RunAccountWithResponse(ctx, taskID, id["big1"]); err != nil || resp.StatusCode() != http.StatusConflict {
		t.Errorf("retry a running account: %v %v", err, resp)
	} else {
		wantAnswer("retry a running account", resp.StatusCode(), string(resp.Body), http.StatusConflict, "account is running")
	}
	// A login test blocks nothing, and nothing blocks it: it tests the
	// accounts not in the run, beside it.
	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.JSON202 == nil || resp.JSON202.Accounts == 0 {
		t.Errorf("test every account while others run: %v %v, want 202 with the accounts not in the run", err, resp)
	}
	servicetest.WaitTestsDone(t, s.Client, taskID)
	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{Ids: []int64{id["big1"]}}); err == nil {
		wantAnswer("test a running account", resp.StatusCode(), string(resp.Body), http.StatusConflict, "no account of the task matches")
	}
	if resp, err := s.Client.DeleteAccountWithResponse(ctx, taskID, id["ann"]); err == nil {
		wantAnswer("delete an account", resp.StatusCode(), string(resp.Body), http.StatusConflict, "task is running")
	}
	if resp, err := s.Client.DeleteTaskWithResponse(ctx, taskID); err == nil {
		wantAnswer("delete the task", resp.StatusCode(), string(resp.Body), http.StatusConflict, "task is running")
	}
	if resp, err := s.Client.UpdateAccountWithResponse(ctx, taskID, id["big1"], api.AccountInput{SourceLogin: "big1", SourcePassword: "other"}); err == nil {
		wantAnswer("change a running account", resp.StatusCode(), string(resp.Body), http.StatusConflict, "account is running")
	}
	status, body = cancel(api.AccountSelection{Ids: []int64{id["ann"]}})
	wantAnswer("cancel an idle account", status, body, http.StatusConflict, "no selected account is running")
	if resp, err := s.Client.CancelAccountWithResponse(ctx, taskID, id["ann"]); err == nil {
		wantAnswer("cancel an idle account alone", resp.StatusCode(), string(resp.Body), http.StatusConflict, "account is not running")
	}

	// An account joins, and waits for room behind the big ones; canceled,
	// it ends at once.
	status, body = run(api.AccountSelection{Ids: []int64{id["cid"]}})
	wantAnswer("cid joins", status, body, http.StatusAccepted, `{"accounts":1}`)
	if got := accountState("cid"); got != api.AccountStateQueued {
		t.Fatalf("cid is %s, want queued behind the big ones", got)
	}
	status, body = cancel(api.AccountSelection{State: []api.AccountState{api.AccountStateQueued}})
	wantAnswer("cancel the queued", status, body, http.StatusAccepted, `{"accounts":1}`)
	if got := accountState("cid"); got != api.AccountStateCanceled {
		t.Errorf("cid is %s after its cancel, want canceled at once", got)
	}

	// One of the big ones stops on its own, promptly; the other goes on.
	canceled := time.Now()
	if resp, err := s.Client.CancelAccountWithResponse(ctx, taskID, id["big2"]); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel big2: %v %v", err, resp)
	}
	waitAccounts(t, s, taskID, func(c api.AccountCounts) bool { return c.Canceled == 2 })
	if took := time.Since(canceled); took > 5*time.Second {
		t.Errorf("big2 took %s to stop", took)
	}
	if got := accountState("big1"); got != api.AccountStateRunning {
		t.Fatalf("big1 is %s after big2's cancel, want running", got)
	}

	// Fixed, tested, retried, run by a search, added: all while big1 runs.
	if resp, err := s.Client.UpdateAccountWithResponse(ctx, taskID, id["ann"], api.AccountInput{SourceLogin: "ann", SourcePassword: "pw"}); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("fix ann: %v %v", err, resp)
	}
	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{Ids: []int64{id["ann"]}}); err != nil || resp.JSON202 == nil || resp.JSON202.Accounts != 1 {
		t.Fatalf("test ann: %v %v", err, resp)
	}
	tested := servicetest.WaitTask(t, s.Client, taskID, func(task api.Task) error {
		if task.Tests.Tested != 1 {
			return fmt.Errorf("tests %+v", task.Tests)
		}
		return nil
	})
	if tested.State != api.TaskStateRunning || tested.Tests.Failed != 0 {
		t.Errorf("after ann's test beside the run: task %s, tests %+v; want running, no failure", tested.State, tested.Tests)
	}
	if resp, err := s.Client.GetAccountWithResponse(ctx, taskID, id["ann"]); err != nil || resp.JSON200 == nil ||
		resp.JSON200.SourceTest == nil || !resp.JSON200.SourceTest.Ok || resp.JSON200.SourceTest.Outdated {
		t.Errorf("ann's source test after the fix: %v %+v", err, resp.JSON200)
	}
	if resp, err := s.Client.RunAccountWithResponse(ctx, taskID, id["ann"]); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("retry ann: %v %v", err, resp)
	}
	status, body = run(api.AccountSelection{Q: "BO"})
	wantAnswer("run bob", status, body, http.StatusAccepted, `{"accounts":1}`)
	importAccounts(t, s, taskID, "dan,pw\n")
	id = accountIDs(t, s, taskID)
	waitAccounts(t, s, taskID, func(c api.AccountCounts) bool { return c.Completed == 2 })
	if got := accountState("big1"); got != api.AccountStateRunning {
		t.Fatalf("big1 is %s, want still running", got)
	}
	if got := accountState("dan"); got != api.AccountStateIdle {
		t.Errorf("dan, added during the run, is %s, want idle", got)
	}
	if task := getTask(t, s, taskID); task.State != api.TaskStateRunning {
		t.Errorf("task is %s while big1 runs, want running", task.State)
	}

	// The last account of the run stopped, the run ends.
	status, body = cancel(api.AccountSelection{Ids: []int64{id["big1"]}})
	wantAnswer("cancel big1", status, body, http.StatusAccepted, `{"accounts":1}`)
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)
	for _, login := range []string{"ann", "bob"} {
		if diff := imaptest.Diff(old.Read(t, login), neu.Read(t, login)); len(diff) > 0 {
			t.Errorf("%s differs:\n%s", login, strings.Join(diff, "\n"))
		}
	}
	runs, err := s.Client.ListTaskPassesWithResponse(ctx, taskID)
	if err != nil || runs.JSON200 == nil {
		t.Fatalf("runs: %v %v", err, runs)
	}
	if got := *runs.JSON200; len(got) != 1 || got[0].Accounts != 5 || got[0].AccountsCompleted != 2 || got[0].AccountsCanceled != 3 {
		t.Errorf("passes: %+v, want one of 5 accounts: 2 completed, 3 canceled", got)
	}
	// cid, canceled before it started, has a record of that pass too.
	cidRuns, err := s.Client.ListAccountPassesWithResponse(ctx, taskID, id["cid"])
	if err != nil || cidRuns.JSON200 == nil || len(*cidRuns.JSON200) != 1 {
		t.Fatalf("cid's passes: %v %v", err, cidRuns)
	}
	if r := (*cidRuns.JSON200)[0]; r.Pass != 1 || r.State != api.AccountStateCanceled || r.StartedAt != nil || r.MessagesCopied != 0 {
		t.Errorf("cid's pass: %+v, want pass 1 canceled, never started", r)
	}
	var story []string
	for _, e := range taskEvents(t, s, taskID) {
		switch e.Kind {
		case "run.started", "run.joined", "accounts.canceled", "run.finished":
			story = append(story, string(e.Kind)+": "+e.Message)
		}
	}
	want := []string{
		"run.started: pass 1 started: 2 accounts",
		"run.joined: pass 1: 1 more account joins the pass under way",
		"accounts.canceled: 1 account canceled (1 not started, canceled); the others go on",
		"accounts.canceled: 1 account canceled (1 running, stopping); the others go on",
		"run.joined: pass 1: ann joins the pass under way",
		"run.joined: pass 1: 1 more account joins the pass under way",
		"accounts.canceled: 1 account canceled (1 running, stopping); the others go on",
		"run.finished: pass finished: completed with errors (6 accounts: 2 completed, 3 canceled)",
	}
	if strings.Join(story, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(story, "\n"), strings.Join(want, "\n"))
	}
}

// smallInbox is n small messages in INBOX, marked with tag.
func smallInbox(tag string, n int) imaptest.Corpus {
	var c imaptest.Corpus
	for i := range n {
		c.Messages = append(c.Messages, imaptest.Message{Folder: "INBOX", Date: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
			Body: []byte(fmt.Sprintf("From: a@example.org\r\nSubject: %s %d\r\nMessage-ID: <%s.%d@example.org>\r\n\r\nbody\r\n", tag, i, tag, i))})
	}
	return c
}

// accountIDs maps the source logins of a task's accounts to their ids.
func accountIDs(t *testing.T, s *servicetest.Service, taskID int64) map[string]int64 {
	t.Helper()
	resp, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("list accounts: %v %v", err, resp)
	}
	ids := map[string]int64{}
	for _, a := range *resp.JSON200 {
		ids[a.SourceLogin] = a.Id
	}
	return ids
}
