package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// migrationFixture is a task between two real Dovecots whose accounts
// hold a corpus each.
type migrationFixture struct {
	taskID   int64
	old, neu *imaptest.Dovecot
	logins   []string
}

// newMigration loads n accounts of messages each and makes a task of them
// with options (JSON, may be empty).
func (s *testService) newMigration(t *testing.T, n, messages int, options string) migrationFixture {
	t.Helper()
	users := map[string]string{}
	var csv strings.Builder
	f := migrationFixture{}
	for i := range n {
		login := fmt.Sprintf("user%d", i)
		users[login] = "secret-pw-" + login
		f.logins = append(f.logins, login)
		fmt.Fprintf(&csv, "%s,%s\n", login, users[login])
	}
	f.old = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	f.neu = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
	for i, login := range f.logins {
		f.old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: messages}))
	}
	src := s.createEndpoint(t, api.EndpointInput{Host: f.old.Host, Port: f.old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{Host: f.neu.Host, Port: f.neu.Port, TlsMode: api.TLSModePlain})
	if options == "" {
		options = "{}"
	}
	got := s.do(t, "POST", "/tasks", fmt.Sprintf(`{"name":"m","source_endpoint_id":%d,"destination_endpoint_id":%d,"options":%s}`, src, dst, options))
	var created api.Created
	if got.status != http.StatusCreated || json.Unmarshal([]byte(got.body), &created) != nil {
		t.Fatalf("create task: %d %s", got.status, got.body)
	}
	f.taskID = created.Id
	s.importCSV(t, f.taskID, csv.String())
	return f
}

// wantExact fails unless every account's destination equals its source.
func (f migrationFixture) wantExact(t *testing.T) {
	t.Helper()
	for _, login := range f.logins {
		if diff := imaptest.Diff(f.old.Read(t, login), f.neu.Read(t, login)); len(diff) > 0 {
			t.Fatalf("%s differs:\n%s", login, strings.Join(diff, "\n"))
		}
	}
}

// TestRunEventsTellTheRunInOrder watches a run over the WebSocket: it
// opens with run.started, each account's events run from account.started
// through throttled account.progress and one folder.done per folder to
// account.done, with figures; run.finished closes it; seq only grows and
// no frame holds a password.
func TestRunEventsTellTheRunInOrder(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.startWorkersWith(t, 4, worker.Options{ProgressEvents: 20 * time.Millisecond})
	f := s.newMigration(t, 2, 400, "")
	conn := s.dialStream(t, fmt.Sprintf("?task_id=%d", f.taskID))
	if got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/run", f.taskID), ""); got.status != http.StatusAccepted {
		t.Fatalf("POST run: %d %s", got.status, got.body)
	}
	events, raw := servicetest.ReadEventsUntil(t, conn, "run.finished")
	f.wantExact(t)
	if strings.Contains(raw, "secret-pw") {
		t.Fatal("an event frame holds a password")
	}
	if events[0].Kind != "run.started" {
		t.Errorf("first event %s %q, want run.started", events[0].Kind, events[0].Message)
	}
	type story struct {
		kinds      []string
		folderDone int64
		progressed bool
		done       api.Event
	}
	stories := map[int64]*story{}
	for i, e := range events {
		if i > 0 && e.Seq <= events[i-1].Seq {
			t.Fatalf("seq %d after %d", e.Seq, events[i-1].Seq)
		}
		if e.AccountId == 0 {
			continue
		}
		st := stories[e.AccountId]
		if st == nil {
			st = &story{}
			stories[e.AccountId] = st
		}
		st.kinds = append(st.kinds, string(e.Kind))
		switch e.Kind {
		case "folder.done":
			st.folderDone++
			if e.Folder == "" || e.MessagesTotal == nil || e.Login == "" || e.Host == "" || e.Port == 0 {
				t.Errorf("folder.done without folder or figures: %+v", e)
			}
		case "account.progress":
			st.progressed = st.progressed || (e.MessagesCopied != nil && *e.MessagesCopied > 0 && *e.MessagesTotal >= *e.MessagesCopied)
		case "account.done":
			st.done = e
		}
	}
	if len(stories) != 2 {
		t.Fatalf("events of %d accounts, want 2", len(stories))
	}
	for id, st := range stories {
		if st.kinds[0] != "account.started" || st.kinds[len(st.kinds)-1] != "account.done" {
			t.Errorf("account %d: %v", id, st.kinds)
		}
		if !st.progressed {
			t.Errorf("account %d: no account.progress with figures: %v", id, st.kinds)
		}
		if st.done.FoldersTotal == nil || st.folderDone != *st.done.FoldersTotal || *st.done.MessagesCopied == 0 {
			t.Errorf("account %d: %d folder.done events, account.done %+v", id, st.folderDone, st.done)
		}
	}
}

// TestRunAccountRetriesOneAccount: after a run in which one account
// failed, fixing its password and running that account alone copies it,
// leaves the other untouched, and the task's state comes from both.
func TestRunAccountRetriesOneAccount(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.startWorkers(t, 4)
	f := s.newMigration(t, 2, 60, "")
	ids := s.accountIDs(t, f.taskID)
	path := fmt.Sprintf("/tasks/%d", f.taskID)
	if got := s.do(t, "PUT", fmt.Sprintf("%s/accounts/%d", path, ids[1]), `{"source_login":"user1","source_password":"wrong"}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", got.status, got.body)
	}
	s.do(t, "POST", path+"/run", "")
	s.waitForState(t, f.taskID, api.TaskStateCompletedWithErrors)

	retry := fmt.Sprintf("%s/accounts/%d/run", path, ids[1])
	wantText(t, s.do(t, "POST", fmt.Sprintf("%s/accounts/%d/run", path, ids[1]+1000), ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "POST", fmt.Sprintf("/tasks/%d/accounts/%d/run", f.taskID+1000, ids[1]), ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "POST", path+"/accounts/x/run", ""), http.StatusBadRequest, "bad id")
	if got := s.do(t, "PUT", fmt.Sprintf("%s/accounts/%d", path, ids[1]), `{"source_login":"user1","source_password":"secret-pw-user1"}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", got.status, got.body)
	}
	if got := s.do(t, "POST", retry, ""); got.status != http.StatusAccepted {
		t.Fatalf("POST %s: %d %s", retry, got.status, got.body)
	}
	wantText(t, s.do(t, "POST", retry, ""), http.StatusConflict, "account is running")
	s.waitForState(t, f.taskID, api.TaskStateCompleted)
	f.wantExact(t)
	accounts, _ := s.client.ListAccountsWithResponse(context.Background(), f.taskID, nil)
	first, second := (*accounts.JSON200)[0], (*accounts.JSON200)[1]
	if first.State != api.AccountStateCompleted || first.Progress.MessagesCopied == 0 || *first.FinishedAt == *second.StartedAt {
		t.Errorf("the account not retried changed: %+v", first)
	}
	if second.State != api.AccountStateCompleted || second.LastError != "" || second.Progress.MessagesCopied == 0 {
		t.Errorf("retried account: %+v", second)
	}
}

// TestLimitsHoldRunsBack: a task's parallel_accounts, and the service's
// limit of connections per host, each keep accounts from running at the
// same time; the waiting ones start as others end, and all finish exact.
func TestLimitsHoldRunsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		options string
		limits  migration.AttemptLimits
	}{
		{"parallel_accounts", `{"parallel_accounts":1}`, migration.AttemptLimits{}},
		// Both Dovecots listen on 127.0.0.1: one run holds all 3.
		{"connections_per_host", `{"parallel_accounts":4}`, migration.AttemptLimits{ConnectionsPerHost: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServiceConfig(t, app.Config{AttemptLimits: tc.limits})
			s.startWorkers(t, 4)
			f := s.newMigration(t, 3, 60, tc.options)
			conn := s.dialStream(t, fmt.Sprintf("?task_id=%d", f.taskID))
			s.do(t, "POST", fmt.Sprintf("/tasks/%d/run", f.taskID), "")
			events, _ := servicetest.ReadEventsUntil(t, conn, "run.finished")
			running := 0
			for _, e := range events {
				switch e.Kind {
				case "account.started":
					if running++; running > 1 {
						t.Fatalf("two accounts run at once: %s", messages(events))
					}
				case "account.done", "account.failed":
					running--
				}
			}
			s.waitForState(t, f.taskID, api.TaskStateCompleted)
			f.wantExact(t)
		})
	}
}

// startOneAttempt runs a task of one account of messages, with no
// worker, and starts its attempt as a worker would: the test then plays
// the worker.
func (s *testService) startOneAttempt(t *testing.T, messages int) (migrationFixture, migration.AttemptJob) {
	t.Helper()
	ctx := context.Background()
	f := s.newMigration(t, 1, messages, "")
	accountID := s.accountIDs(t, f.taskID)[0]
	s.do(t, "POST", fmt.Sprintf("/tasks/%d/run", f.taskID), "")
	job := migration.AttemptJob{TaskID: f.taskID, AccountID: accountID}
	if err := s.pool.QueryRow(ctx, "SELECT run_generation FROM accounts WHERE id = $1", accountID).Scan(&job.Generation); err != nil {
		t.Fatal(err)
	}
	if _, started, err := s.store.AttemptStart(ctx, job); err != nil || !started {
		t.Fatalf("start: %v %v", started, err)
	}
	return f, job
}

// TestExpiredLeaseRequeuesTheAccount plays a process that died while
// migrating an account: its lease expires, the account is queued again
// under a new generation, another worker finishes it exactly, and what
// the dead generation might still report is ignored.
func TestExpiredLeaseRequeuesTheAccount(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	ctx := context.Background()
	f, dead := s.startOneAttempt(t, 60)
	accountID, generation := dead.AccountID, dead.Generation
	if n, err := s.store.RequeueLostAttempts(ctx, time.Minute); err != nil || n != 0 {
		t.Fatalf("a fresh lease was taken for expired: %d %v", n, err)
	}
	if _, err := s.pool.Exec(ctx, "UPDATE accounts SET heartbeat_at = now() - interval '2 minutes' WHERE id = $1", accountID); err != nil {
		t.Fatal(err)
	}
	if n, err := s.store.RequeueLostAttempts(ctx, time.Minute); err != nil || n != 1 {
		t.Fatalf("requeued %d (%v), want 1", n, err)
	}
	if _, err := s.store.AttemptRenew(ctx, dead); err != migration.ErrLeaseLost {
		t.Fatalf("the dead job renewed its lease: %v", err)
	}
	late := migration.AttemptOutcome{TaskID: f.taskID, AccountID: accountID, Generation: generation, State: migration.AccountFailed, LastError: "late"}
	if err := s.store.RecordAttempt(ctx, late); err != nil {
		t.Fatal(err)
	}
	s.startWorkers(t, 2)
	s.waitForState(t, f.taskID, api.TaskStateCompleted)
	f.wantExact(t)
	var events []api.Event
	json.Unmarshal([]byte(s.do(t, "GET", fmt.Sprintf("/tasks/%d/events", f.taskID), "").body), &events)
	if !strings.Contains(messages(events), "stopped answering") {
		t.Errorf("no event tells of the requeue: %s", messages(events))
	}
}

// flakyProxy forwards TCP connections to target, but closes the next
// refuse ones at once, as a server restarting or a network outage would,
// and cuts the next one after cutAfter bytes from the server, when set.
type flakyProxy struct {
	listener net.Listener
	target   string
	refuse   atomic.Int64
	cutAfter atomic.Int64
}

func startFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyProxy{listener: l, target: target}
	t.Cleanup(func() { l.Close() })
	go p.serve()
	return p
}

func (p *flakyProxy) serve() {
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return
		}
		if p.refuse.Add(-1) >= 0 {
			conn.Close()
			continue
		}
		cut := p.cutAfter.Swap(0)
		go func() {
			defer conn.Close()
			upstream, err := net.Dial("tcp", p.target)
			if err != nil {
				return
			}
			defer upstream.Close()
			go io.Copy(upstream, conn)
			if cut > 0 {
				io.CopyN(conn, upstream, cut)
				return
			}
			io.Copy(conn, upstream)
		}()
	}
}

// TestTransientFailuresRetryTheAccount: a source that drops connections
// fails the account's run, which is queued again after a delay; when the
// source answers again the retry completes the account exactly, and when
// it never does the account fails after its last retry.
func TestTransientFailuresRetryTheAccount(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.startWorkersWith(t, 2, worker.Options{
		Tuning: transfer.Tuning{Tries: 1, GreetingTimeout: 5 * time.Second},
		// River makes a scheduled job available within 5 s, whatever its delay.
		RetryDelays: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond},
	})
	users := map[string]string{"alice": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 60}))
	proxy := startFlakyProxy(t, old.Addr())
	port := proxy.listener.Addr().(*net.TCPAddr).Port
	src := s.createEndpoint(t, api.EndpointInput{Host: "127.0.0.1", Port: port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, src, dst)
	s.importCSV(t, taskID, "alice,pw\n")
	path := fmt.Sprintf("/tasks/%d", taskID)

	// The first run breaks off in the middle of the mailbox; its retry
	// carries on.
	proxy.cutAfter.Store(150_000)
	s.do(t, "POST", path+"/run", "")
	s.waitForState(t, taskID, api.TaskStateCompleted)
	copied := neu.Read(t, "alice")
	if diff := imaptest.Diff(old.Read(t, "alice"), copied); len(diff) > 0 {
		t.Fatalf("alice differs after the retries:\n%s", strings.Join(diff, "\n"))
	}
	// The figures describe the whole pass, not its last run: everything on
	// the destination was copied by it, and nothing was planned twice.
	accounts, _ := s.client.ListAccountsWithResponse(context.Background(), taskID, nil)
	a := (*accounts.JSON200)[0].Progress
	if n := int64(len(copied.Messages)); a.MessagesCopied != n || a.MessagesTotal != n || a.MessagesSkipped+a.MessagesCopied < n {
		t.Errorf("after a retry: %d of %d copied, %d skipped; want all %d copied by the pass", a.MessagesCopied, a.MessagesTotal, a.MessagesSkipped, n)
	}
	var events []api.Event
	json.Unmarshal([]byte(s.do(t, "GET", path+"/events", "").body), &events)
	if got := messages(events); !strings.Contains(got, "retry 1 of 2") || strings.Contains(got, "retry 2 of 2") {
		t.Errorf("events of one retry: %s", got)
	}

	proxy.refuse.Store(1000)
	s.do(t, "POST", path+"/run", "")
	s.waitForState(t, taskID, api.TaskStateFailed)
	json.Unmarshal([]byte(s.do(t, "GET", fmt.Sprintf("%s/events?after=%d", path, events[len(events)-1].Seq), "").body), &events)
	if got := messages(events); !strings.Contains(got, "retry 2 of 2") || events[len(events)-2].Kind != "account.failed" {
		t.Errorf("events of a run whose retries ran out: %s", got)
	}
}

// TestDeadProcessesTestsEnd: connection tests a killed process was running
// end as failed ("test again") once they are older than any live test
// could be, so that the task leaves testing, and never count twice.
func TestDeadProcessesTestsEnd(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	ctx := context.Background()
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "a@old,pw\nb@old,pw\n")
	if got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/test", taskID), ""); got.status != http.StatusAccepted {
		t.Fatalf("POST test: %d %s", got.status, got.body)
	}
	// What a process leaves when it is killed while testing.
	if _, err := s.pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_by = '{dead}',
		attempted_at = now() - interval '10 minutes' WHERE kind = 'account_test'`); err != nil {
		t.Fatal(err)
	}
	if n, err := s.store.RequeueLostAttempts(ctx, time.Minute); err != nil || n != 2 {
		t.Fatalf("ended %d tests (%v), want 2", n, err)
	}
	if n, err := s.store.RequeueLostAttempts(ctx, time.Minute); err != nil || n != 0 {
		t.Fatalf("ended %d tests a second time (%v)", n, err)
	}
	servicetest.WaitTestsDone(t, s.client, taskID)
	accounts, _ := s.client.ListAccountsWithResponse(ctx, taskID, nil)
	for _, a := range *accounts.JSON200 {
		if a.SourceTest == nil || a.SourceTest.Ok || !strings.Contains(a.SourceTest.Error, "process testing it stopped") {
			t.Errorf("account %s: %+v", a.SourceLogin, a.SourceTest)
		}
	}
}

// TestJobTakenButNeverStartedIsRequeued: a process that died after taking
// an account's job from the queue but before starting the account leaves
// the job running and the account queued; once that is older than a
// lease, the account gets a new job and the run completes.
func TestJobTakenButNeverStartedIsRequeued(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	ctx := context.Background()
	f := s.newMigration(t, 1, 20, "")
	s.do(t, "POST", fmt.Sprintf("/tasks/%d/run", f.taskID), "")
	if _, err := s.pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_by = '{dead}',
		attempted_at = now() - interval '2 minutes' WHERE kind = 'account_run'`); err != nil {
		t.Fatal(err)
	}
	if n, err := s.store.RequeueLostAttempts(ctx, 5*time.Minute); err != nil || n != 0 {
		t.Fatalf("requeued %d (%v) before the lease time", n, err)
	}
	if n, err := s.store.RequeueLostAttempts(ctx, time.Minute); err != nil || n != 1 {
		t.Fatalf("requeued %d (%v), want 1", n, err)
	}
	s.startWorkers(t, 2)
	s.waitForState(t, f.taskID, api.TaskStateCompleted)
	f.wantExact(t)
}

// TestParkedAttemptTellsItsPauseWithItsFigures: an attempt that ends on a
// pause too long to wait out (a spent daily budget) queues its account
// until the pause ends, and logs one account.throttled event in the same
// commit, after the folders it finished, carrying the figures it stopped
// at: a page that reads the account on that event finds it queued and
// paused, with those figures. No account.failed is logged.
func TestParkedAttemptTellsItsPauseWithItsFigures(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	ctx := context.Background()
	f, job := s.startOneAttempt(t, 10)
	accountID, generation := job.AccountID, job.Generation
	var after int64
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM events").Scan(&after); err != nil {
		t.Fatal(err)
	}

	parties := migration.AttemptParties{TaskID: f.taskID, AccountID: accountID,
		Source:      migration.Party{Side: "source", Login: "user0", Host: f.old.Host, Port: f.old.Port},
		Destination: migration.Party{Side: "destination", Login: "user0", Host: f.neu.Host, Port: f.neu.Port}}
	until := time.Now().Add(20 * time.Hour).Truncate(time.Second)
	stoppedAt := migration.Progress{FoldersTotal: 4, FoldersDone: 1, MessagesTotal: 10, MessagesCopied: 3, BytesCopied: 3000}
	earlier := stoppedAt
	earlier.MessagesCopied, earlier.BytesCopied = 0, 0
	folder := parties.FolderDoneEvent(migration.FolderEnd{Source: "Archive", Destination: "Archive"}, earlier)
	outcome := parties.Outcome(migration.AttemptEnd{Progress: stoppedAt, Err: fmt.Errorf("budget spent"),
		Paused: &migration.Pause{Side: "destination", Words: "the endpoint's daily upload budget is spent", Until: until, Budget: true}}, nil)
	outcome.Generation, outcome.Pending = generation, []migration.Event{folder}
	if err := s.store.RecordAttempt(ctx, outcome); err != nil {
		t.Fatal(err)
	}

	var events []api.Event
	json.Unmarshal([]byte(s.do(t, "GET", fmt.Sprintf("/tasks/%d/events?after=%d", f.taskID, after), "").body), &events)
	if len(events) != 2 || events[0].Kind != api.EventKindFolderDone || events[1].Kind != api.EventKindAccountThrottled {
		t.Fatalf("the park logged %s, want the folder's folder.done, then account.throttled", messages(events))
	}
	paused := events[1]
	if paused.MessagesCopied == nil || *paused.MessagesCopied != 3 || paused.FoldersDone == nil || *paused.FoldersDone != 1 {
		t.Errorf("the pause's event carries %v copied, %v folders done; want the 3 and 1 it stopped at", paused.MessagesCopied, paused.FoldersDone)
	}
	if !strings.Contains(paused.Message, "daily upload budget") || paused.Side != "destination" {
		t.Errorf("the pause's event says %q (side %q), want the destination's budget", paused.Message, paused.Side)
	}
	var account api.Account
	json.Unmarshal([]byte(s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts/%d", f.taskID, accountID), "").body), &account)
	if account.State != api.AccountStateQueued || account.PausedUntil == nil || !account.PausedUntil.Equal(until) {
		t.Errorf("the parked account is %s, paused until %v; want queued until %v", account.State, account.PausedUntil, until)
	}
	if account.Progress.MessagesCopied != 3 || !strings.Contains(account.LastError, "daily upload budget") {
		t.Errorf("the parked account shows %d copied and %q, want 3 and the budget", account.Progress.MessagesCopied, account.LastError)
	}
}
