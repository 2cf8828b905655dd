package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// TestRunMigratesEveryAccount runs a task of two accounts through the API
// between two real Dovecots: the destination ends exact, the task and the
// accounts completed with their figures, the events tell the story, a
// second run copies nothing, and a third carries flag changes.
func TestRunMigratesEveryAccount(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.startWorkers(t, 4)
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a", "bob": "b"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "a2", "bob": "b2"}})
	for i, login := range []string{"alice", "bob"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 60}))
	}
	src := s.createEndpoint(t, api.EndpointInput{Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModeStarttls, TlsSkipVerify: true})
	taskID := s.createTask(t, src, dst)
	s.importCSV(t, taskID, "alice,a,alice,a2\nbob,b,bob,b2\n")
	path := fmt.Sprintf("/tasks/%d", taskID)

	if got := s.do(t, "POST", path+"/run", ""); got.status != http.StatusAccepted {
		t.Fatalf("POST run: %d %s", got.status, got.body)
	}
	task := s.waitForState(t, taskID, api.TaskStateCompleted)
	for _, login := range []string{"alice", "bob"} {
		if diff := imaptest.Diff(old.Read(t, login), neu.Read(t, login)); len(diff) > 0 {
			t.Fatalf("%s differs after the run:\n%s", login, strings.Join(diff, "\n"))
		}
	}
	accounts, _ := s.client.ListAccountsWithResponse(context.Background(), taskID, nil)
	var copied int64
	for _, a := range *accounts.JSON200 {
		if a.State != api.AccountStateCompleted || a.Progress.MessagesCopied == 0 || a.StartedAt == nil || a.FinishedAt == nil {
			t.Errorf("account %s: %+v", a.SourceLogin, a)
		}
		copied += a.Progress.MessagesCopied
	}
	if task.Totals.MessagesCopied != copied || task.StartedAt == nil || task.FinishedAt == nil {
		t.Errorf("task figures %+v, accounts copied %d", task, copied)
	}
	var events []api.Event
	json.Unmarshal([]byte(s.do(t, "GET", path+"/events", "").body), &events)
	kinds := map[api.EventKind]int{}
	for _, e := range events {
		kinds[e.Kind]++
	}
	if kinds["account.started"] != 2 || kinds["account.done"] != 2 || kinds["run.finished"] != 1 || events[len(events)-1].Kind != "run.finished" {
		t.Errorf("events %v", kinds)
	}

	// The second run finds nothing new.
	if got := s.do(t, "POST", path+"/run", ""); got.status != http.StatusAccepted {
		t.Fatalf("second POST run: %d %s", got.status, got.body)
	}
	s.waitForState(t, taskID, api.TaskStateCompleted)
	accounts, _ = s.client.ListAccountsWithResponse(context.Background(), taskID, nil)
	for _, a := range *accounts.JSON200 {
		if a.Progress.MessagesCopied != 0 {
			t.Errorf("second run copied %d messages of %s", a.Progress.MessagesCopied, a.SourceLogin)
		}
	}

	// Alice reads and tags her mail on the old server: a third run carries
	// that by the map kept in the database, and copies nothing.
	c := old.Login(t, "alice", "a")
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	var all imap.SeqSet
	all.AddRange(1, 0)
	if err := c.Store(all, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen, "$Done"}}, nil).Close(); err != nil {
		t.Fatal(err)
	}
	s.do(t, "POST", path+"/run", "")
	s.waitForState(t, taskID, api.TaskStateCompleted)
	if diff := imaptest.Diff(old.Read(t, "alice"), neu.Read(t, "alice")); len(diff) > 0 {
		t.Fatalf("alice differs after a flag change and a run:\n%s", strings.Join(diff, "\n"))
	}
	alice, _ := s.client.GetAccountWithResponse(context.Background(), taskID, (*accounts.JSON200)[0].Id)
	if p := alice.JSON200.Progress; p.MessagesCopied != 0 || p.MessagesSkipped == 0 {
		t.Errorf("third run: %+v, want nothing copied and every message already there", p)
	}
}

// TestRunWithAWrongPasswordFailsThatAccount: one account fails, the other
// completes, and the task says so.
func TestRunWithAWrongPasswordFailsThatAccount(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.startWorkers(t, 4)
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a", "bob": "b", "carol": "c"}})
	ep := s.createEndpoint(t, api.EndpointInput{Host: d.Host, Port: d.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, ep, s.createEndpoint(t, api.EndpointInput{Host: d.Host, Port: d.Port, TlsMode: api.TLSModePlain}))
	s.importCSV(t, taskID, "alice,a,carol,c\nbob,wrong,carol,c\n")
	if got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/run", taskID), ""); got.status != http.StatusAccepted {
		t.Fatalf("POST run: %d %s", got.status, got.body)
	}
	task := s.waitForState(t, taskID, api.TaskStateCompletedWithErrors)
	if task.Accounts.Completed != 1 || task.Accounts.Failed != 1 {
		t.Errorf("accounts %+v", task.Accounts)
	}
	accounts, _ := s.client.ListAccountsWithResponse(context.Background(), taskID, nil)
	bob := (*accounts.JSON200)[1]
	// The failure names its side, that side's login, host and port: the
	// operator is sent to the right server.
	wantError := fmt.Sprintf("source bob at %s:%d: authentication failed: ", d.Host, d.Port)
	if bob.State != api.AccountStateFailed || !strings.HasPrefix(bob.LastError, wantError) {
		t.Errorf("bob: %s %q, want the error to start %q", bob.State, bob.LastError, wantError)
	}
	// And it says what to do.
	if want := ". What to do: Check the source login bob and its password (Edit the account), then retry the account"; !strings.Contains(bob.LastError, want) {
		t.Errorf("bob's error %q gives no advice %q", bob.LastError, want)
	}
	var events []api.Event
	json.Unmarshal([]byte(s.do(t, "GET", fmt.Sprintf("/tasks/%d/events", taskID), "").body), &events)
	var failed []api.Event
	for _, e := range events {
		if e.Kind == "account.failed" {
			failed = append(failed, e)
		}
	}
	if len(failed) != 1 || failed[0].Side != "source" || failed[0].Login != "bob" ||
		failed[0].Host != d.Host || failed[0].Port != d.Port {
		t.Errorf("account.failed events %+v, want one naming the source, bob and %s:%d", failed, d.Host, d.Port)
	}
}

// TestCancelStopsTheRunAndARerunFinishesIt cancels a run of eight
// accounts, one at a time, while the first is copying: the task ends
// canceled with no account left queued or running, and a new run brings
// every account to exactly its source, nothing twice.
func TestCancelStopsTheRunAndARerunFinishesIt(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.startWorkers(t, 1)
	users := map[string]string{}
	var csv strings.Builder
	for i := range 8 {
		login := fmt.Sprintf("user%d", i)
		users[login] = "pw"
		fmt.Fprintf(&csv, "%s,pw\n", login)
	}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
	for i := range 8 {
		old.Load(t, fmt.Sprintf("user%d", i), imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i), Messages: 150}))
	}
	src := s.createEndpoint(t, api.EndpointInput{Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, src, dst)
	s.importCSV(t, taskID, csv.String())
	path := fmt.Sprintf("/tasks/%d", taskID)
	wantText(t, s.do(t, "POST", path+"/cancel", ""), http.StatusConflict, "task is not running")

	if got := s.do(t, "POST", path+"/run", ""); got.status != http.StatusAccepted {
		t.Fatalf("POST run: %d %s", got.status, got.body)
	}
	s.waitForState(t, taskID, api.TaskStateRunning)
	if got := s.do(t, "POST", path+"/cancel", ""); got.status != http.StatusAccepted {
		t.Fatalf("POST cancel: %d %s", got.status, got.body)
	}
	task := s.waitForState(t, taskID, api.TaskStateCanceled)
	if task.Accounts.Queued != 0 || task.Accounts.Running != 0 || task.Accounts.Canceled == 0 {
		t.Errorf("after cancel: %+v", task.Accounts)
	}
	var events []api.Event
	json.Unmarshal([]byte(s.do(t, "GET", path+"/events", "").body), &events)
	if events[len(events)-1].Kind != "run.canceled" {
		t.Errorf("last event %+v, want run.canceled", events[len(events)-1])
	}

	if got := s.do(t, "POST", path+"/run", ""); got.status != http.StatusAccepted {
		t.Fatalf("POST run again: %d %s", got.status, got.body)
	}
	s.waitForState(t, taskID, api.TaskStateCompleted)
	for i := range 8 {
		login := fmt.Sprintf("user%d", i)
		if diff := imaptest.Diff(old.Read(t, login), neu.Read(t, login)); len(diff) > 0 {
			t.Fatalf("%s differs after cancel and re-run:\n%s", login, strings.Join(diff, "\n"))
		}
	}
}
