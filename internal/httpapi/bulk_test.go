package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// seedBulk imports six accounts with the states and login tests a first
// run leaves: two failed (one because its login test failed), a login
// test that failed on the destination only, completed ones.
func seedBulk(t *testing.T, s *testService) int64 {
	t.Helper()
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "ann,pw\nben,pw\ncid,pw\ndee,pw\neve,pw\nfay,pw\n")
	_, err := s.pool.Exec(context.Background(), `
		UPDATE accounts SET
		  state = CASE source_login WHEN 'ann' THEN 'failed' WHEN 'ben' THEN 'failed' WHEN 'fay' THEN 'idle' ELSE 'completed' END,
		  source_test_ok = CASE source_login WHEN 'ann' THEN false WHEN 'fay' THEN NULL ELSE true END,
		  destination_test_ok = CASE source_login WHEN 'dee' THEN false WHEN 'fay' THEN NULL WHEN 'eve' THEN NULL ELSE true END
		WHERE task_id = $1`, taskID)
	if err != nil {
		t.Fatal(err)
	}
	return taskID
}

// statesByLogin are the task's accounts' states, as "login:state".
func (s *testService) statesByLogin(t *testing.T, taskID int64) []string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT source_login || ':' || state FROM accounts WHERE task_id = $1 ORDER BY source_login`, taskID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestListAccountsByLoginTest(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedBulk(t, s)
	for test, want := range map[string][]string{
		"passed":   {"ben", "cid"},
		"failed":   {"ann", "dee"},
		"untested": {"eve", "fay"},
	} {
		if got := s.listPage(t, fmt.Sprintf("/tasks/%d/accounts?login_test=%s", taskID, test)).logins; !slices.Equal(got, want) {
			t.Errorf("login_test=%s: %q, want %q", test, got, want)
		}
	}
	wantText(t, s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts?login_test=maybe", taskID), ""), http.StatusBadRequest, "login_test must be passed, failed or untested")
}

// TestRunTheFailedOnly: a run of the failed accounts queues them alone,
// and the others keep their state and figures.
func TestRunTheFailedOnly(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedBulk(t, s)
	path := fmt.Sprintf("/tasks/%d", taskID)
	got := s.do(t, "POST", path+"/run", `{"state":["failed"]}`)
	if got.status != http.StatusAccepted || strings.TrimSpace(got.body) != `{"accounts":2}` {
		t.Fatalf("run the failed: %d %s", got.status, got.body)
	}
	want := []string{"ann:queued", "ben:queued", "cid:completed", "dee:completed", "eve:completed", "fay:idle"}
	if states := s.statesByLogin(t, taskID); !slices.Equal(states, want) {
		t.Errorf("after running the failed: %q, want %q", states, want)
	}
	// The running-condition refusals hold while they run; the whole task
	// cannot run twice, but other accounts join the run.
	wantText(t, s.do(t, "POST", path+"/run", ``), http.StatusConflict, "task is running")
	wantText(t, s.do(t, "POST", path+"/accounts/delete", `{"state":["completed"]}`), http.StatusConflict, "task is running")
	if got := s.do(t, "POST", path+"/test", ``); got.status != http.StatusAccepted || strings.TrimSpace(got.body) != `{"accounts":4}` {
		t.Errorf("a login test of the accounts not in the run: %d %s", got.status, got.body)
	}
	wantText(t, s.do(t, "POST", path+"/run", `{"state":["queued"]}`), http.StatusConflict, "no account of the task matches")
	if got := s.do(t, "POST", path+"/run", `{"state":["idle"]}`); got.status != http.StatusAccepted || strings.TrimSpace(got.body) != `{"accounts":1}` {
		t.Errorf("fay joins the run: %d %s", got.status, got.body)
	}
	want = []string{"ann:queued", "ben:queued", "cid:completed", "dee:completed", "eve:completed", "fay:queued"}
	if states := s.statesByLogin(t, taskID); !slices.Equal(states, want) {
		t.Errorf("after fay joined: %q, want %q", states, want)
	}
}

// TestRunOnlyTheLoginsThatWork: after a login test, a run of the accounts
// whose test passed leaves out those that would fail (and lock out).
func TestRunOnlyTheLoginsThatWork(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedBulk(t, s)
	got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/run", taskID), `{"login_test":"passed"}`)
	if got.status != http.StatusAccepted || strings.TrimSpace(got.body) != `{"accounts":2}` {
		t.Fatalf("run the passed: %d %s", got.status, got.body)
	}
	want := []string{"ann:failed", "ben:queued", "cid:queued", "dee:completed", "eve:completed", "fay:idle"}
	if states := s.statesByLogin(t, taskID); !slices.Equal(states, want) {
		t.Errorf("after running the accounts that passed: %q, want %q", states, want)
	}
}

func TestTestSomeAccounts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedBulk(t, s)
	got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/test", taskID), `{"login_test":"failed","q":"D"}`)
	if got.status != http.StatusAccepted || strings.TrimSpace(got.body) != `{"accounts":1}` {
		t.Fatalf("test the failed with a d: %d %s", got.status, got.body)
	}
	task, err := s.client.GetTaskWithResponse(context.Background(), taskID)
	if err != nil || task.JSON200 == nil {
		t.Fatal(err)
	}
	if task.JSON200.State != "idle" || task.JSON200.Tests.Total != 1 || !task.JSON200.Tests.Running {
		t.Errorf("task %s with tests %+v, want idle with 1 test under way", task.JSON200.State, task.JSON200.Tests)
	}
	var waiting []string
	rows, _ := s.pool.Query(context.Background(), `SELECT source_login FROM accounts WHERE task_id = $1 AND test_state IS NOT NULL`, taskID)
	for rows.Next() {
		var login string
		rows.Scan(&login) //nolint:errcheck // rows.Err says
		waiting = append(waiting, login)
	}
	if rows.Err() != nil || !slices.Equal(waiting, []string{"dee"}) {
		t.Errorf("accounts with a test under way: %q (%v), want dee", waiting, rows.Err())
	}
}

func TestDeleteSomeAccounts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedBulk(t, s)
	path := fmt.Sprintf("/tasks/%d/accounts/delete", taskID)
	got := s.do(t, "POST", path, `{"state":["completed"],"q":"e"}`)
	if got.status != http.StatusOK || strings.TrimSpace(got.body) != `{"deleted":2}` {
		t.Fatalf("delete the completed with an e: %d %s", got.status, got.body)
	}
	want := []string{"ann:failed", "ben:failed", "cid:completed", "fay:idle"}
	if states := s.statesByLogin(t, taskID); !slices.Equal(states, want) {
		t.Errorf("after the delete: %q, want %q", states, want)
	}
	ids := s.accountIDs(t, taskID)
	got = s.do(t, "POST", path, fmt.Sprintf(`{"ids":[%d,%d]}`, ids[0], ids[3]))
	if got.status != http.StatusOK || strings.TrimSpace(got.body) != `{"deleted":2}` {
		t.Fatalf("delete two by id: %d %s", got.status, got.body)
	}
	if states := s.statesByLogin(t, taskID); !slices.Equal(states, []string{"ben:failed", "cid:completed"}) {
		t.Errorf("after deleting by id: %q", states)
	}
}

func TestBulkRefusals(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedBulk(t, s)
	other, _, _ := s.newTask(t)
	s.importCSV(t, other, "zed,pw\n")
	zed := s.accountIDs(t, other)[0]
	path := fmt.Sprintf("/tasks/%d", taskID)
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/run", `{"state":["canceled"]}`, http.StatusConflict, "no account of the task matches"},
		{"POST", "/run", fmt.Sprintf(`{"ids":[%d]}`, zed), http.StatusConflict, "no account of the task matches"}, // another task's
		{"POST", "/test", `{"q":"nobody"}`, http.StatusConflict, "no account of the task matches"},
		{"POST", "/accounts/delete", `{"login_test":"untested","state":["failed"]}`, http.StatusConflict, "no account of the task matches"},
		{"POST", "/run", `{"state":["done"]}`, http.StatusBadRequest, `state "done" is not an account state`},
		{"POST", "/run", `{"login_test":"maybe"}`, http.StatusBadRequest, "login_test must be passed, failed or untested"},
		{"POST", "/test", `{"ids":[0]}`, http.StatusBadRequest, "ids must be account ids, not 0"},
		{"POST", "/run", `{"q":"a\u0000"}`, http.StatusBadRequest, "q must not contain control characters"},
		{"POST", "/run", `[]`, http.StatusBadRequest, "bad json"},
		{"POST", "/accounts/delete", `{}`, http.StatusBadRequest, "selection must name ids, state, q or login_test: to delete every account, delete the task"},
		{"POST", "/accounts/delete", ``, http.StatusBadRequest, "bad json"},
	} {
		wantText(t, s.do(t, tc.method, path+tc.path, tc.body), tc.status, tc.want)
	}
	// Nothing changed.
	want := []string{"ann:failed", "ben:failed", "cid:completed", "dee:completed", "eve:completed", "fay:idle"}
	if states := s.statesByLogin(t, taskID); !slices.Equal(states, want) {
		t.Errorf("after the refusals: %q, want %q", states, want)
	}
	wantText(t, s.do(t, "POST", "/tasks/999999/accounts/delete", `{"state":["failed"]}`), http.StatusNotFound, "not found")
}
