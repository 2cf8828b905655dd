package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/secret"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// cluster is mailmigrate serve processes on one database, with a task
// between two real Dovecots to run.
type cluster struct {
	exe      string
	dbURL    string
	key      string
	db       *pgx.Conn
	old, neu *imaptest.Dovecot
	logins   []string
}

func newCluster(t *testing.T, accounts, messages int) *cluster {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{exe: exe, dbURL: dbtest.URL(t), key: base64.StdEncoding.EncodeToString(secret.NewKey())}
	c.db, err = pgx.Connect(context.Background(), c.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.db.Close(context.Background()) })
	users := map[string]string{}
	for i := range accounts {
		login := fmt.Sprintf("user%d", i)
		users[login] = "pw-" + login
		c.logins = append(c.logins, login)
	}
	c.old = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	c.neu = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
	for i, login := range c.logins {
		c.old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: messages}))
	}
	return c
}

// start runs a serve process named id (its name in the job queue) that
// migrates at most workers accounts at once; leases expire after 3 s.
func (c *cluster) start(t *testing.T, id string, workers int) *service {
	t.Helper()
	return startService(t, c.exe, []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"MAILMIGRATE_DATA_DIR=" + t.TempDir(), // for the API token it makes
		"DATABASE_URL=" + c.dbURL,
		"MAILMIGRATE_SECRET_KEY=" + c.key,
		"MAILMIGRATE_WORKERS=" + fmt.Sprint(workers),
		"MAILMIGRATE_WORKER_ID=" + id,
		"MAILMIGRATE_LEASE_EXPIRY=3s",
		runMainEnv + "=1",
	}, 30*time.Second)
}

// createTask registers the Dovecots and a task of every login through s.
func (c *cluster) createTask(t *testing.T, s *service, parallel int) int64 {
	t.Helper()
	client := apiClient(t, s)
	ctx := context.Background()
	var ids [2]int64
	for i, d := range []*imaptest.Dovecot{c.old, c.neu} {
		resp, err := client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: d.Host, Port: d.Port, TlsMode: api.TLSModePlain})
		if err != nil || resp.JSON201 == nil {
			t.Fatalf("create endpoint: %v %v", err, resp)
		}
		ids[i] = resp.JSON201.Id
	}
	task, err := client.CreateTaskWithResponse(ctx, api.TaskInput{Name: "move", SourceEndpointId: ids[0], DestinationEndpointId: ids[1],
		Options: &api.TaskOptions{ParallelAccounts: parallel}})
	if err != nil || task.JSON201 == nil {
		t.Fatalf("create task: %v %v", err, task)
	}
	var csv strings.Builder
	for _, login := range c.logins {
		fmt.Fprintf(&csv, "%s,pw-%s\n", login, login)
	}
	imported, err := client.ImportAccountsWithBodyWithResponse(ctx, task.JSON201.Id, "text/csv", strings.NewReader(csv.String()))
	if err != nil || imported.JSON201 == nil {
		t.Fatalf("import: %v %v", err, imported)
	}
	return task.JSON201.Id
}

// waitRunningOn waits until the process named id migrates an account
// (holds it under the job's generation and has logged its start) and
// returns the account's id.
func (c *cluster) waitRunningOn(t *testing.T, id string) int64 {
	t.Helper()
	var accountID int64
	testsupport.Eventually(t, time.Minute, func() error {
		err := c.db.QueryRow(context.Background(), `
			SELECT a.id FROM river_job j
			JOIN accounts a ON a.id = (j.args->>'account_id')::bigint AND a.run_generation = (j.args->>'generation')::bigint
			WHERE j.kind = 'account_run' AND j.state = 'running' AND a.state = 'running'
			  AND j.attempted_by[array_upper(j.attempted_by, 1)] = $1
			  AND EXISTS (SELECT 1 FROM events e WHERE e.account_id = a.id AND e.kind = 'account.started')
			LIMIT 1`, id).Scan(&accountID)
		if err == pgx.ErrNoRows {
			return fmt.Errorf("process %s migrates no account", id)
		}
		if err != nil {
			t.Fatal(err)
		}
		return nil
	})
	return accountID
}

// workedOn returns the processes that ran migration jobs.
func (c *cluster) workedOn(t *testing.T) map[string]bool {
	t.Helper()
	rows, err := c.db.Query(context.Background(),
		`SELECT DISTINCT unnest(attempted_by) FROM river_job WHERE kind = 'account_run'`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set
}

func (c *cluster) wantExact(t *testing.T) {
	t.Helper()
	for _, login := range c.logins {
		if diff := imaptest.Diff(c.old.Read(t, login), c.neu.Read(t, login)); len(diff) > 0 {
			t.Fatalf("%s differs from its source:\n%s", login, strings.Join(diff, "\n"))
		}
	}
}

func apiClient(t *testing.T, s *service) *api.ClientWithResponses {
	t.Helper()
	client, err := api.NewClientWithResponses(s.base+"/api/v1", api.WithHTTPClient(s.client()))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// TestTwoProcessesShareARunAndOneFinishesWhatAKilledOneLeft runs two
// serve processes on one database: the accounts of one run spread over
// both, a WebSocket on A sees the work B does, and after B is killed
// (SIGKILL) mid-account A takes its accounts over and finishes the run:
// every account exact, nothing twice.
func TestTwoProcessesShareARunAndOneFinishesWhatAKilledOneLeft(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 6, 300)
	a, b := c.start(t, "A", 2), c.start(t, "B", 2)
	taskID := c.createTask(t, a, 6)
	conn, resp, err := websocket.DefaultDialer.Dial(fmt.Sprintf("ws%s/api/v1/events/ws?task_id=%d", strings.TrimPrefix(a.base, "http"), taskID),
		http.Header{"Authorization": {"Bearer " + a.token}})
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	defer conn.Close()
	if status, body := doRequest(t, a.client(), "POST", fmt.Sprintf("%s/api/v1/tasks/%d/run", a.base, taskID), ""); status != http.StatusAccepted {
		t.Fatalf("run: %d %s", status, body)
	}
	killed := c.waitRunningOn(t, "B")
	b.kill(t)

	events, _ := servicetest.ReadEventsUntil(t, conn, "run.finished")
	servicetest.WaitTaskState(t, apiClient(t, a), taskID, api.TaskStateCompleted)
	c.wantExact(t)
	if workers := c.workedOn(t); !workers["A"] || !workers["B"] {
		t.Errorf("migration jobs ran on %v, want both A and B", workers)
	}
	started, requeued := map[int64]int{}, false
	for _, e := range events {
		if e.Kind == "account.started" {
			started[e.AccountId]++
		}
		requeued = requeued || (e.Kind == "error" && e.AccountId == killed && strings.Contains(e.Message, "stopped answering"))
	}
	if started[killed] != 2 || !requeued {
		t.Errorf("A's stream did not show the killed account %d started by B, taken over and started again: %v", killed, started)
	}
	if len(started) != len(c.logins) {
		t.Errorf("A's stream showed %d accounts starting, want %d", len(started), len(c.logins))
	}
}

// TestKilledServiceFinishesItsRunAfterARestart kills the only serve
// process (SIGKILL) while it migrates an account; started again, it
// finishes the run with every account exact, nothing twice.
func TestKilledServiceFinishesItsRunAfterARestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, 300)
	first := c.start(t, "first", 1)
	taskID := c.createTask(t, first, 1)
	if status, body := doRequest(t, first.client(), "POST", fmt.Sprintf("%s/api/v1/tasks/%d/run", first.base, taskID), ""); status != http.StatusAccepted {
		t.Fatalf("run: %d %s", status, body)
	}
	killed := c.waitRunningOn(t, "first")
	first.kill(t)

	second := c.start(t, "second", 1)
	servicetest.WaitTaskState(t, apiClient(t, second), taskID, api.TaskStateCompleted)
	c.wantExact(t)
	status, body := doRequest(t, second.client(), "GET", fmt.Sprintf("%s/api/v1/tasks/%d/events?limit=1000", second.base, taskID), "")
	var events []api.Event
	if status != http.StatusOK || json.Unmarshal([]byte(body), &events) != nil {
		t.Fatalf("events: %d %s", status, body)
	}
	finished := 0
	for _, e := range events {
		if e.Kind == "run.finished" {
			finished++
		}
	}
	if !strings.Contains(body, "stopped answering") || finished != 1 {
		t.Errorf("events of account %d: no requeue, or %d run.finished:\n%s", killed, finished, body)
	}
}
