package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// TestWaitingAccountsCostNothing queues 10 000 accounts behind two
// slots held by servers that never greet: only the two admitted accounts
// have a job, the database hears nothing from the others while they
// wait, and a cancel ends the run within seconds although the servers
// still say nothing.
func TestWaitingAccountsCostNothing(t *testing.T) {
	t.Parallel()
	queries := servicetest.NewQueryCounter("accounts")
	s := servicetest.Start(t, servicetest.Options{Queries: queries, Workers: worker.Options{
		// Only the cancel can end these runs.
		Tuning: transfer.Tuning{GreetingTimeout: 10 * time.Minute},
	}})
	ctx := context.Background()
	mute := imaptest.StartMute(t)
	src := createEndpoint(t, s, mute.Host, mute.Port)
	taskID := createTask(t, s, src, createEndpoint(t, s, mute.Host, mute.Port), `{"parallel_accounts": 2}`)
	var csv strings.Builder
	const accounts = 10_000
	for i := range accounts {
		fmt.Fprintf(&csv, "user%05d,pw\n", i)
	}
	if resp, err := s.Client.ImportAccountsWithBodyWithResponse(ctx, taskID, "text/csv", strings.NewReader(csv.String())); err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	task := waitAccounts(t, s, taskID, func(c api.AccountCounts) bool { return c.Running == 2 })
	if task.State != api.TaskStateRunning {
		t.Fatalf("task %s with two accounts running", task.State)
	}
	var jobs int
	if err := s.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'account_run'").Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 2 {
		t.Errorf("%d migration jobs for 2 running and %d waiting accounts, want 2", jobs, accounts-2)
	}

	// What may fall in the window does not depend on how many wait: the
	// two running accounts' lease renewals (every 10 s) and one tick of
	// the watch for dead processes (every 15 s: a few reads and one
	// admission). Polling waiting accounts made thousands a second.
	before := queries.Count("accounts")
	time.Sleep(2 * time.Second)
	if n := queries.Count("accounts") - before; n > 20 {
		t.Errorf("%d statements on accounts in 2 s while %d accounts wait", n, accounts-2)
	}

	canceled := time.Now()
	if resp, err := s.Client.CancelTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCanceled)
	if took := time.Since(canceled); took > 15*time.Second {
		t.Errorf("the cancel took %s against servers that never greet", took)
	}
	task = waitAccounts(t, s, taskID, func(api.AccountCounts) bool { return true })
	if task.Accounts.Canceled != accounts {
		t.Errorf("accounts after the cancel: %v", task.Accounts)
	}
}

// TestAdmissionIsFairAcrossTasks: two tasks share servers with room for
// one run at a time. The task started second, with one account, runs it
// as soon as the first task's first account ends, not after all of them.
func TestAdmissionIsFairAcrossTasks(t *testing.T) {
	t.Parallel()
	// Both Dovecots listen on 127.0.0.1: one run holds all 3 connections.
	s := servicetest.Start(t, servicetest.Options{AttemptLimits: migration.AttemptLimits{ConnectionsPerHost: 3}})
	users := map[string]string{}
	for i := range 5 {
		users[fmt.Sprintf("user%d", i)] = "pw"
	}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	for i := range 5 {
		old.Load(t, fmt.Sprintf("user%d", i), imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i), Messages: 150}))
	}
	src, dst := createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port)
	many, one := createTask(t, s, src, dst, ""), createTask(t, s, src, dst, "")
	importAccounts(t, s, many, "user0,pw\nuser1,pw\nuser2,pw\nuser3,pw\n")
	importAccounts(t, s, one, "user4,pw\n")
	conn, _, err := websocket.DefaultDialer.Dial(strings.Replace(s.API, "http", "ws", 1)+"/events/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, id := range []int64{many, one} {
		if resp, err := s.Client.RunTaskWithResponse(context.Background(), id, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
			t.Fatalf("run: %v %v", err, resp)
		}
	}
	var started []int64
	finished := 0
	for finished < 2 {
		events, _ := servicetest.ReadEventsUntil(t, conn, "run.finished")
		finished++
		for _, e := range events {
			if e.Kind == "account.started" {
				started = append(started, e.TaskId)
			}
		}
	}
	servicetest.WaitTaskState(t, s.Client, many, api.TaskStateCompleted)
	servicetest.WaitTaskState(t, s.Client, one, api.TaskStateCompleted)
	if want := []int64{many, one, many, many, many}; fmt.Sprint(started) != fmt.Sprint(want) {
		t.Errorf("accounts started by task %v, want %v (task %d waits for one account, not four)", started, want, one)
	}
}

// waitAccounts polls the task until its account counts satisfy ok.
func waitAccounts(t *testing.T, s *servicetest.Service, taskID int64, ok func(api.AccountCounts) bool) api.Task {
	t.Helper()
	return servicetest.WaitTask(t, s.Client, taskID, func(task api.Task) error {
		if !ok(task.Accounts) {
			return fmt.Errorf("task %d: accounts %+v", taskID, task.Accounts)
		}
		return nil
	})
}

func createEndpoint(t testing.TB, s *servicetest.Service, host string, port int) int64 {
	t.Helper()
	resp, err := s.Client.CreateEndpointWithResponse(context.Background(), api.EndpointInput{Host: host, Port: port, TlsMode: api.TLSModePlain})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create endpoint: %v %v", err, resp)
	}
	return resp.JSON201.Id
}

func createTask(t testing.TB, s *servicetest.Service, src, dst int64, options string) int64 {
	t.Helper()
	if options == "" {
		options = "{}"
	}
	body := fmt.Sprintf(`{"name":"t","source_endpoint_id":%d,"destination_endpoint_id":%d,"options":%s}`, src, dst, options)
	resp, err := s.Client.CreateTaskWithBodyWithResponse(context.Background(), "application/json", strings.NewReader(body))
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create task: %v %v", err, resp)
	}
	return resp.JSON201.Id
}

func importAccounts(t testing.TB, s *servicetest.Service, taskID int64, csv string) {
	t.Helper()
	resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader(csv))
	if err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}
}
