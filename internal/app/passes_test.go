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
	// The login test counts the sources: the totals are known up front.
	if resp, err := s.Client.TestTaskWithResponse(context.Background(), taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}
	servicetest.WaitTask(t, s.Client, taskID, func(task api.Task) error {
		if task.State != api.TaskStateIdle || task.Tests.Tested != 2 {
			return fmt.Errorf("task %s, %d tested", task.State, task.Tests.Tested)
		}
		return nil
	})
	if totals := getTask(t, s, taskID).Totals; totals.AccountsUncounted != 0 || totals.SourceMessages != 8 || totals.SourceBytes == 0 {
		t.Errorf("after the login test: %+v, want both sources counted, 8 messages", totals)
	}
	run := func() {
		t.Helper()
		if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
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

	resp, err := s.Client.ListTaskPassesWithResponse(context.Background(), taskID)
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
	// The old path, /runs, answers as /passes does until it goes.
	//lint:ignore SA1019 the deprecated path is what this checks
	if old, err := s.Client.ListTaskRunsByOldPathWithResponse(context.Background(), taskID); err != nil || string(old.Body) != string(resp.Body) {
		t.Errorf("GET /tasks/%d/runs answered %v %q, /passes %q", taskID, err, old.Body, resp.Body)
	}
	var messages []string
	for _, e := range taskEvents(t, s, taskID) {
		if e.Kind == "run.started" {
			messages = append(messages, e.Message)
		}
	}
	if strings.Join(messages, "; ") != "pass 1 started: 2 accounts; pass 2 started: 2 accounts; pass 3 started: account bob again" {
		t.Errorf("run.started events: %q", messages)
	}

	// Each account's own record of the passes it ran in, in the report
	// too; its folders and its events.
	ctx := context.Background()
	ann := (*accounts.JSON200)[0].Id
	for id, want := range map[int64]string{ann: "1:completed:5 2:completed:2", bob: "1:completed:3 2:completed:0 3:completed:0"} {
		runs, err := s.Client.ListAccountPassesWithResponse(ctx, taskID, id)
		if err != nil || runs.JSON200 == nil {
			t.Fatalf("account %d runs: %v %v", id, err, runs)
		}
		var got []string
		for _, r := range *runs.JSON200 {
			got = append(got, fmt.Sprintf("%d:%s:%d", r.Pass, r.State, r.MessagesCopied))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("account %d passes %q, want %q", id, strings.Join(got, " "), want)
		}
		//lint:ignore SA1019 the deprecated path is what this checks
		if old, err := s.Client.ListAccountRunsByOldPathWithResponse(ctx, taskID, id); err != nil || string(old.Body) != string(runs.Body) {
			t.Errorf("the old path of account %d's passes answered %v %q, the new %q", id, err, old.Body, runs.Body)
		}
	}
	report, err := s.Client.GetTaskReportWithResponse(ctx, taskID)
	if err != nil || report.StatusCode() != http.StatusOK {
		t.Fatalf("report: %v %v", err, report)
	}
	lines := strings.Split(strings.TrimSpace(string(report.Body)), "\n")
	if !strings.HasSuffix(lines[0], ",source_messages,source_bytes,duration_seconds,sieve_scripts,altered_copies,pass_1_state,pass_1_messages_copied,pass_1_messages_skipped,pass_1_messages_failed,pass_1_bytes_copied,pass_1_duration_seconds,pass_2_state,pass_2_messages_copied,pass_2_messages_skipped,pass_2_messages_failed,pass_2_bytes_copied,pass_2_duration_seconds,pass_3_state,pass_3_messages_copied,pass_3_messages_skipped,pass_3_messages_failed,pass_3_bytes_copied,pass_3_duration_seconds") {
		t.Errorf("report header: %s", lines[0])
	}
	if len(lines) != 3 || !strings.Contains(lines[1], ",completed,5,0,0,") || !strings.Contains(lines[1], ",completed,2,5,0,") || !strings.HasSuffix(lines[1], ",,,,,,") {
		t.Errorf("ann's report row (passes 1 and 2, not 3): %q", lines[1:])
	}
	folders, err := s.Client.ListAccountFoldersWithResponse(ctx, taskID, ann)
	if err != nil || folders.JSON200 == nil {
		t.Fatalf("ann's folders: %v %v", err, folders)
	}
	var inboxes []api.AccountFolder
	for _, f := range *folders.JSON200 {
		if f.Source == "INBOX" {
			inboxes = append(inboxes, f)
		}
	}
	if len(inboxes) != 1 || inboxes[0].Destination != "INBOX" || inboxes[0].SourceMessages != 7 || inboxes[0].Verified != 7 ||
		inboxes[0].SourceBytes == 0 || !inboxes[0].Complete || len(inboxes[0].Refused) != 0 {
		t.Errorf("ann's INBOX: %+v", inboxes)
	}
	events, err := s.Client.ListAccountEventsWithResponse(ctx, taskID, bob, &api.ListAccountEventsParams{})
	if err != nil || events.JSON200 == nil {
		t.Fatalf("bob's events: %v %v", err, events)
	}
	done := 0
	for _, e := range *events.JSON200 {
		if e.AccountId != bob {
			t.Errorf("an event of account %d among bob's: %s", e.AccountId, e.Message)
		}
		if e.Kind == api.EventKindAccountDone {
			done++
		}
	}
	if done != 3 {
		t.Errorf("bob's events hold %d account.done, want 3", done)
	}
	if resp, err := s.Client.ListAccountPassesWithResponse(ctx, taskID+1, bob); err != nil || resp.StatusCode() != http.StatusNotFound {
		t.Errorf("bob's runs under another task: %v %v", err, resp)
	}

	missing, err := s.Client.ListTaskPassesWithResponse(context.Background(), 999999)
	if err != nil || missing.StatusCode() != http.StatusNotFound {
		t.Errorf("runs of a missing task: %v %v", err, missing)
	}
}
