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
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestDailyBudgetSpreadsAnAccountOverDays: into a destination whose
// endpoint allows about five messages' bytes a day per mailbox, a
// 12-message account copies five, then waits queued, "paused until"
// a day later, with an account.throttled event naming the budget (logged
// as it is queued, with the figures it stopped at), and
// its job slot goes to the next account, which completes. When the day's
// bytes have left the count, the account goes on where it was; after
// three days every message is on the destination once, and the account's
// figures count each once.
func TestDailyBudgetSpreadsAnAccountOverDays(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{MaxWorkers: 2})
	ctx := context.Background()
	users := map[string]string{"big": "pw", "small": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	message := func(login string) func(int) []byte {
		return func(i int) []byte {
			return fmt.Appendf(nil, "From: a@example.com\r\nSubject: %s %02d\r\nMessage-ID: <%s.%02d@example.com>\r\n\r\n%s\r\n",
				login, i, login, i, strings.Repeat("budget ", 300))
		}
	}
	old.WriteInbox(t, "big", 12, message("big"))
	old.WriteInbox(t, "small", 1, message("small"))
	size := int64(len(message("big")(0)))

	src := createEndpoint(t, s, old.Host, old.Port)
	resp, err := s.Client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain,
		Limits: &api.EndpointLimits{DailyUploadBytes: 5*size + size/2}})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create endpoint: %v %v", err, resp)
	}
	shown, err := s.Client.GetEndpointWithResponse(ctx, resp.JSON201.Id)
	if err != nil || shown.JSON200 == nil || shown.JSON200.Limits.DailyUploadBytes != 5*size+size/2 {
		t.Fatalf("the endpoint does not show its daily upload budget: %v %v", err, shown)
	}
	taskID := createTask(t, s, src, resp.JSON201.Id, `{"parallel_accounts": 1}`)
	importAccounts(t, s, taskID, "big,pw\nsmall,pw\n")
	conn := runListening(t, s, taskID)

	for day := 1; day <= 3; day++ {
		if day < 3 {
			events, _ := servicetest.ReadEventsUntil(t, conn, api.EventKindAccountThrottled)
			throttled := events[len(events)-1]
			if !strings.Contains(throttled.Message, "daily upload budget") || throttled.Side != "destination" {
				t.Fatalf("day %d: %q, want the destination's daily upload budget", day, throttled.Message)
			}
			// The event is logged as the account is queued, with the
			// figures it stopped at: a page that reads the account on
			// the event finds it waiting, and the figures stand.
			if throttled.MessagesCopied == nil || *throttled.MessagesCopied != int64(5*day) {
				t.Errorf("day %d: the pause's event counts %v messages copied, want %d", day, throttled.MessagesCopied, 5*day)
			}
			big := waitAccount(t, s, taskID, "big", func(api.Account) bool { return true })
			if big.State != api.AccountStateQueued || big.PausedUntil == nil {
				t.Fatalf("day %d: on the pause's event the account is %s, paused until %v; want queued, with the time it goes on", day, big.State, big.PausedUntil)
			}
			if wait := time.Until(*big.PausedUntil); wait < 23*time.Hour || wait > 25*time.Hour {
				t.Errorf("day %d: paused for %v, want about a day", day, wait)
			}
			if !strings.Contains(big.LastError, "daily upload budget") {
				t.Errorf("day %d: the paused account says %q", day, big.LastError)
			}
			if n := len(neu.Read(t, "big").Messages); n != 5*day {
				t.Errorf("day %d: %d messages on the destination, want %d", day, n, 5*day)
			}
			if day == 1 { // the paused account's slot went to the other one
				waitAccount(t, s, taskID, "small", func(a api.Account) bool { return a.State == api.AccountStateCompleted })
			}
			aDayPasses(t, s)
		}
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	if n := len(neu.Read(t, "big").Messages); n != 12 {
		t.Errorf("%d messages on the destination, want the 12 once each", n)
	}
	big := waitAccount(t, s, taskID, "big", func(a api.Account) bool { return a.State == api.AccountStateCompleted })
	if big.Progress.MessagesCopied != 12 {
		t.Errorf("the account counts %d copied, want 12", big.Progress.MessagesCopied)
	}
}

// aDayPasses ages every mailbox's counted bytes by a day and brings the
// paused accounts' start forward to now, as the clock would.
func aDayPasses(t *testing.T, s *servicetest.Service) {
	t.Helper()
	ctx := context.Background()
	for _, stmt := range []string{
		"UPDATE mailbox_traffic SET hour = hour - interval '25 hours'",
		"UPDATE accounts SET run_not_before = now() WHERE run_not_before IS NOT NULL",
		"UPDATE river_job SET scheduled_at = now() WHERE kind = 'admit' AND state = 'scheduled'",
	} {
		if _, err := s.Pool.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMailboxConnectionsHoldAcrossAccounts: three old mailboxes merge
// into one new mailbox whose endpoint takes two connections per mailbox,
// which one run holds: the three accounts run one after another although
// the task runs three at once, and every message arrives.
func TestMailboxConnectionsHoldAcrossAccounts(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{MaxWorkers: 4})
	ctx := context.Background()
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"a": "pw", "b": "pw", "c": "pw"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"shared": "pw"}})
	for _, login := range []string{"a", "b", "c"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(login[0]), Messages: 60}))
	}
	src := createEndpoint(t, s, old.Host, old.Port)
	resp, err := s.Client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain,
		Limits: &api.EndpointLimits{AccountConnections: 2}})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create endpoint: %v %v", err, resp)
	}
	taskID := createTask(t, s, src, resp.JSON201.Id, `{"parallel_accounts": 3}`)
	importAccounts(t, s, taskID, "a,pw,shared,pw\nb,pw,Shared,pw\nc,pw,shared,pw\n")
	conn := runListening(t, s, taskID)
	events, _ := servicetest.ReadEventsUntil(t, conn, api.EventKindRunFinished)
	running, most := 0, 0
	for _, e := range events {
		switch e.Kind {
		case api.EventKindAccountStarted:
			running++
			most = max(most, running)
		case api.EventKindAccountDone, api.EventKindAccountFailed:
			running--
		}
	}
	if most != 1 {
		t.Errorf("%d accounts ran into the shared mailbox at once, want 1 (2 connections per mailbox)", most)
	}
	task := servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	if task.Accounts.Completed != 3 {
		t.Errorf("accounts %+v, want 3 completed", task.Accounts)
	}
}

// waitAccount polls the task's account login until ok.
func waitAccount(t *testing.T, s *servicetest.Service, taskID int64, login string, ok func(api.Account) bool) api.Account {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("accounts: %v %v", err, resp)
		}
		for _, a := range *resp.JSON200 {
			if a.SourceLogin == login && ok(a) {
				return a
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("account %s never got there: %+v", login, *resp.JSON200)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runListening runs the task's accounts and returns the task's live
// event stream, opened before the run.
func runListening(t *testing.T, s *servicetest.Service, taskID int64) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(fmt.Sprintf("%s/events/ws?task_id=%d", strings.Replace(s.API, "http", "ws", 1), taskID), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	return conn
}
