package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestConnectionTestsDoNotWaitForEachOther: while a task tests 40
// accounts on a server that never greets, another task's one-account test
// and another task's run finish at once, and the hanging test can be
// canceled: the task returns to where it was within seconds, says how far
// the test got, keeps its accounts' earlier results, and tests again.
func TestConnectionTestsDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	users := map[string]string{"alice": "pw", "bob": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "bob", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 20}))
	mute := imaptest.StartMute(t)
	src, dst := createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port)
	hanging := createTask(t, s, createEndpoint(t, s, mute.Host, mute.Port), dst, `{"parallel_accounts": 2}`)
	var csv strings.Builder
	for i := range 40 {
		fmt.Fprintf(&csv, "user%02d,pw\n", i)
	}
	importAccounts(t, s, hanging, csv.String())
	tested, migrated := createTask(t, s, src, dst, ""), createTask(t, s, src, dst, "")
	importAccounts(t, s, tested, "alice,pw\n")
	importAccounts(t, s, migrated, "bob,pw\n")

	if resp, err := s.Client.TestTaskWithResponse(ctx, hanging, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}
	if resp, err := s.Client.TestTaskWithResponse(ctx, tested, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}
	if resp, err := s.Client.RunTaskWithResponse(ctx, migrated, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	got := servicetest.WaitTestsDone(t, s.Client, tested)
	if want := (api.TestFigures{Total: 1, Tested: 1}); testCounts(got.Tests) != want || got.State != api.TaskStateIdle {
		t.Errorf("tests of the one-account task: %+v, want %+v", got.Tests, want)
	}
	servicetest.WaitTaskState(t, s.Client, migrated, api.TaskStateCompleted)
	// Its logins wait 20 s for a greeting: it cannot have got anywhere.
	task := getTask(t, s, hanging)
	if task.State != api.TaskStateIdle || testCounts(task.Tests) != (api.TestFigures{Total: 40, Running: true}) {
		t.Fatalf("the hanging task: %s, tests %+v", task.State, task.Tests)
	}

	canceled := time.Now()
	if resp, err := s.Client.CancelTaskWithResponse(ctx, hanging, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel a test: %v %v", err, resp)
	}
	servicetest.WaitTestsDone(t, s.Client, hanging)
	if took := time.Since(canceled); took > 10*time.Second {
		t.Errorf("canceling the test took %s", took)
	}
	events := taskEvents(t, s, hanging)
	last := events[len(events)-1]
	if last.Kind != "test.canceled" || last.Message != "connection test canceled: 0 of 40 accounts tested, 0 failed" {
		t.Errorf("last event: %s %q", last.Kind, last.Message)
	}
	for _, e := range events {
		if strings.HasPrefix(string(e.Kind), "test.") && e.Kind != "test.canceled" {
			t.Errorf("a canceled test logged %s: %s", e.Kind, e.Message)
		}
	}
	accounts, err := s.Client.ListAccountsWithResponse(ctx, hanging, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range *accounts.JSON200 {
		if a.SourceTest != nil || a.DestinationTest != nil {
			t.Errorf("%s has a result from a canceled test: %+v %+v", a.SourceLogin, a.SourceTest, a.DestinationTest)
		}
	}
	if resp, err := s.Client.TestTaskWithResponse(ctx, hanging, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test again after a cancel: %v %v", err, resp)
	}
}

// TestConnectionTestCountsFailures: the task counts each account tested,
// and those whose login failed on either side.
func TestConnectionTestCountsFailures(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	users := map[string]string{"alice": "pw", "bob": "pw", "carol": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw", "bob": "pw"}})
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), `{"parallel_accounts": 1}`)
	// bob's source password is wrong; carol has no destination account.
	importAccounts(t, s, taskID, "alice,pw\nbob,wrong,bob,pw\ncarol,pw\n")
	if resp, err := s.Client.TestTaskWithResponse(context.Background(), taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}
	task := servicetest.WaitTestsDone(t, s.Client, taskID)
	if want := (api.TestFigures{Total: 3, Tested: 3, Failed: 2}); testCounts(task.Tests) != want {
		t.Errorf("tests: %+v, want %+v", task.Tests, want)
	}
}

func getTask(t testing.TB, s *servicetest.Service, id int64) api.Task {
	t.Helper()
	resp, err := s.Client.GetTaskWithResponse(context.Background(), id)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("get task: %v %v", err, resp)
	}
	return *resp.JSON200
}

func taskEvents(t testing.TB, s *servicetest.Service, id int64) []api.Event {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/tasks/%d/events?limit=1000", s.API, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []api.Event
	if err := json.NewDecoder(resp.Body).Decode(&events); err != nil {
		t.Fatal(err)
	}
	return events
}

// testCounts are a test's figures without its times, to compare.
func testCounts(f api.TestFigures) api.TestFigures {
	return api.TestFigures{Total: f.Total, Tested: f.Tested, Failed: f.Failed, Running: f.Running}
}
