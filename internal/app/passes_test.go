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

// TestEveryRunIsAPass: the first copy, the cut-over delta and a retry of
// one account are three passes, each with its own figures; the delta does
// not replace what the first copy did.
func TestEveryRunIsAPass(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	users := map[string]string{"ann": "pw", "bob": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	inbox := func(subject string, n int) imaptest.Corpus {
		var c imaptest.Corpus
		for i := range n {
			c.Messages = append(c.Messages, imaptest.Message{Folder: "INBOX", Date: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
				Body: []byte(fmt.Sprintf("From: a@example.org\r\nSubject: %s %d\r\nMessage-ID: <%s.%d@example.org>\r\n\r\nbody\r\n", subject, i, subject, i))})
		}
		return c
	}
	old.Load(t, "ann", inbox("first", 5))
	old.Load(t, "bob", inbox("first", 3))
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "ann,pw\nbob,pw\n")
	if totals := getTask(t, s, taskID).Totals; totals.AccountsUncounted != 2 || totals.SourceMessages != 0 {
		t.Errorf("before any run: %+v, want 2 accounts not counted", totals)
	}
	run := func() {
		t.Helper()
		if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
			t.Fatalf("run: %v %v", err, resp)
		}
		servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	}
	run()
	// The sources are counted: 5 and 3 messages, and their bytes.
	if totals := getTask(t, s, taskID).Totals; totals.AccountsUncounted != 0 || totals.SourceMessages != 8 ||
		totals.SourceBytes < totals.BytesCopied || totals.BytesCopied == 0 {
		t.Errorf("after pass 1: %+v, want 8 messages counted, of the bytes copied", totals)
	}
	old.Load(t, "ann", inbox("delta", 2)) // mail that came in before cut-over
	run()
	if totals := getTask(t, s, taskID).Totals; totals.SourceMessages != 10 ||
		totals.MessagesCopied+totals.MessagesSkipped+totals.MessagesFailed != totals.SourceMessages {
		t.Errorf("after pass 2: %+v, want 10 counted, all copied or skipped", totals)
	}
	accounts, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
	if err != nil || accounts.JSON200 == nil {
		t.Fatal(err)
	}
	bob := (*accounts.JSON200)[1].Id
	if resp, err := s.Client.RunAccountWithResponse(context.Background(), taskID, bob); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("retry bob: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)

	resp, err := s.Client.ListTaskRunsWithResponse(context.Background(), taskID)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("runs: %v %v", err, resp)
	}
	var got []string
	for _, p := range *resp.JSON200 {
		if p.EndedAt == nil || p.State == nil || p.EndedAt.Before(p.StartedAt) {
			t.Errorf("pass %d: ended %v in state %v", p.Pass, p.EndedAt, p.State)
			continue
		}
		got = append(got, fmt.Sprintf("pass %d: %d accounts, %d completed, %d copied of %d, %s", p.Pass, p.Accounts, p.AccountsCompleted, p.MessagesCopied, p.SourceMessages, *p.State))
	}
	want := []string{
		"pass 1: 2 accounts, 2 completed, 8 copied of 8, completed",
		"pass 2: 2 accounts, 2 completed, 2 copied of 10, completed",
		"pass 3: 1 accounts, 1 completed, 0 copied of 3, completed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("passes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if (*resp.JSON200)[0].BytesCopied == 0 {
		t.Error("pass 1 copied no bytes")
	}
	var messages []string
	for _, e := range taskEvents(t, s, taskID) {
		if e.Kind == "run.started" {
			messages = append(messages, e.Message)
		}
	}
	if strings.Join(messages, "; ") != "run started: pass 1, 2 accounts; run started: pass 2, 2 accounts; run started: pass 3, account bob again" {
		t.Errorf("run.started events: %q", messages)
	}

	missing, err := s.Client.ListTaskRunsWithResponse(context.Background(), 999999)
	if err != nil || missing.StatusCode() != http.StatusNotFound {
		t.Errorf("runs of a missing task: %v %v", err, missing)
	}
}
