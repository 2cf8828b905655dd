package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// startWorkers runs the background workers on the test's database, as a
// serve process does.
func (s *testService) startWorkers(t *testing.T, maxWorkers int) {
	t.Helper()
	s.startWorkersWith(t, maxWorkers, worker.Options{})
}

// startWorkersWith runs them as app.Start does, but with no watch for
// dead processes: tests that need it call the store themselves.
func (s *testService) startWorkersWith(t *testing.T, maxWorkers int, opts worker.Options) {
	t.Helper()
	err := s.process.StartWorkers(app.Config{MaxWorkers: maxWorkers, FetchPollInterval: 100 * time.Millisecond, Workers: opts})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConnectionTest runs POST /tasks/{id}/test against real Dovecots:
// one account whose logins work, one with a wrong destination password.
func TestConnectionTest(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.startWorkers(t, 4)
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a-pw", "bob": "b-pw"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "a-new", "bob": "b-new"}})
	src := s.createEndpoint(t, api.EndpointInput{Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{Host: neu.Host, Port: neu.TLSPort, TlsMode: api.TLSModeSsl, TlsSkipVerify: true})
	taskID := s.createTask(t, src, dst)
	path := fmt.Sprintf("/tasks/%d", taskID)
	wantText(t, s.do(t, "POST", path+"/test", ""), http.StatusConflict, "task has no accounts")
	s.importCSV(t, taskID, "alice,a-pw,alice,a-new\nbob,b-pw,bob,wrong\n")

	if got := s.do(t, "POST", path+"/test", ""); got.status != http.StatusAccepted {
		t.Fatalf("POST test: %d %s", got.status, got.body)
	}
	task := servicetest.WaitTestsDone(t, s.client, taskID)
	if task.Accounts.Total != 2 || task.State != api.TaskStateIdle {
		t.Fatalf("task %+v", task)
	}
	accounts, _ := s.client.ListAccountsWithResponse(context.Background(), taskID, nil)
	alice, bob := (*accounts.JSON200)[0], (*accounts.JSON200)[1]
	if alice.SourceTest == nil || !alice.SourceTest.Ok || !alice.DestinationTest.Ok {
		t.Errorf("alice's tests: %+v %+v", alice.SourceTest, alice.DestinationTest)
	}
	if bob.SourceTest == nil || !bob.SourceTest.Ok || bob.DestinationTest.Ok ||
		!strings.HasPrefix(bob.DestinationTest.Error, "authentication failed: ") {
		t.Errorf("bob's tests: %+v %+v", bob.SourceTest, bob.DestinationTest)
	}

	var events []api.Event
	got := s.do(t, "GET", path+"/events", "")
	if err := json.Unmarshal([]byte(got.body), &events); err != nil || len(events) != 4 {
		t.Fatalf("events: %d %s", got.status, got.body)
	}
	var failed []api.Event
	for i, e := range events {
		if i > 0 && e.Seq <= events[i-1].Seq {
			t.Errorf("events out of order: %+v", events)
		}
		if e.Kind == "test.failed" {
			failed = append(failed, e)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("want one test.failed event: %+v", events)
	}
	f := failed[0]
	wantMessage := fmt.Sprintf("bob → %s:%d: authentication failed: ", neu.Host, neu.TLSPort)
	if f.Side != "destination" || f.Login != "bob" || f.Host != neu.Host || f.Port != neu.TLSPort ||
		f.AccountId != bob.Id || !strings.HasPrefix(f.Message, wantMessage) || f.Error == "" {
		t.Errorf("test.failed event %+v, want its message to start %q", f, wantMessage)
	}
	for _, secret := range []string{"a-pw", "b-pw", "a-new", "wrong"} {
		if strings.Contains(got.body, secret) {
			t.Errorf("events show a password: %s", got.body)
		}
	}
	// Paging.
	page := s.do(t, "GET", fmt.Sprintf("%s/events?after=%d&limit=2", path, events[0].Seq), "")
	var second []api.Event
	if err := json.Unmarshal([]byte(page.body), &second); err != nil || len(second) != 2 || second[0].Seq != events[1].Seq {
		t.Errorf("page after %d: %s", events[0].Seq, page.body)
	}
	wantText(t, s.do(t, "GET", "/tasks/999/events", ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "GET", path+"/events?limit=5000", ""), http.StatusBadRequest, "limit must be between 1 and 1000")
}

// TestConnectionTestBesideAnything: a login test never changes the
// task's state and is refused by nothing but a test under way: it starts
// on a running task (testing the accounts not in the run), and while it
// is under way the task can still run, be edited or deleted.
func TestConnectionTestBesideAnything(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "a@x,pw\n")
	wantText(t, s.do(t, "POST", "/tasks/999/test", ""), http.StatusNotFound, "not found")
	s.setTaskState(t, taskID, "running")
	if got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/test", taskID), ""); got.status != http.StatusAccepted {
		t.Fatalf("POST test of a running task: %d %s", got.status, got.body)
	}
	// No worker runs here: the queued test stays under way.
	wantText(t, s.do(t, "POST", fmt.Sprintf("/tasks/%d/test", taskID), ""), http.StatusConflict, "a connection test is running")
	s.setTaskState(t, taskID, "idle")
	task, _ := s.client.GetTaskWithResponse(context.Background(), taskID)
	if task.JSON200.State != api.TaskStateIdle || !task.JSON200.Tests.Running {
		t.Errorf("state %s, tests %+v; want idle with the test under way", task.JSON200.State, task.JSON200.Tests)
	}
	got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/cancel", taskID), "")
	if got.status != http.StatusAccepted {
		t.Fatalf("cancel the test: %d %s", got.status, got.body)
	}
	task, _ = s.client.GetTaskWithResponse(context.Background(), taskID)
	if task.JSON200.Tests.Running {
		t.Errorf("tests %+v after the cancel, want none under way", task.JSON200.Tests)
	}
	wantText(t, s.do(t, "POST", fmt.Sprintf("/tasks/%d/cancel", taskID), ""), http.StatusConflict, "task is not running")
	if got := s.do(t, "DELETE", fmt.Sprintf("/tasks/%d", taskID), ""); got.status != http.StatusNoContent {
		t.Errorf("delete the task: %d %s", got.status, got.body)
	}
}

func (s *testService) waitForState(t *testing.T, taskID int64, want api.TaskState) api.Task {
	t.Helper()
	return servicetest.WaitTaskState(t, s.client, taskID, want)
}
