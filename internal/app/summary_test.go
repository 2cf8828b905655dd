package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestTheTaskSummaryIsTheTasksTruth follows a task through a login test
// of one account, a first pass with one refused login and a delta pass,
// and after each step compares the task's summary with what is so: the
// messages on the destination servers (copied to date), the last pass's
// own figures, and each account's logins (working, refused, untested).
func TestTheTaskSummaryIsTheTasksTruth(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	users := map[string]string{"ann": "a", "bob": "b", "cyd": "c"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	for i, login := range []string{"ann", "bob", "cyd"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 4}))
	}
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "source_login,source_password,destination_login,destination_password\n"+
		"ann,a,ann,a\nbob,b,bob,b\ncyd,wrong,cyd,c\n")
	onDestination := func() int64 {
		n := 0
		for login := range users {
			n += len(neu.Read(t, login).Messages)
		}
		return int64(n)
	}
	want := func(step string, logins api.LoginFigures, lastPass int64) {
		t.Helper()
		task := getTask(t, s, taskID)
		if task.Logins != logins {
			t.Errorf("%s: logins %+v, want %+v", step, task.Logins, logins)
		}
		if got, truth := task.Totals.MessagesCopiedToDate, onDestination(); got != truth {
			t.Errorf("%s: %d messages copied to date, the destinations hold %d", step, got, truth)
		}
		if task.Totals.MessagesCopied != lastPass {
			t.Errorf("%s: the last pass copied %d messages, want %d", step, task.Totals.MessagesCopied, lastPass)
		}
	}
	want("imported", api.LoginFigures{Untested: 3}, 0)

	ann := accountByLogin(t, s, taskID, "ann")
	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{Ids: []int64{ann.Id}}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test ann: %v %v", err, resp)
	}
	servicetest.WaitTestsDone(t, s.Client, taskID)
	want("ann tested", api.LoginFigures{Working: 1, Untested: 2}, 0)

	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)
	firstPass := onDestination()
	want("the first pass", api.LoginFigures{Working: 2, Refused: 1}, firstPass)

	old.WriteInbox(t, "ann", 3, func(i int) []byte {
		return fmt.Appendf(nil, "From: a@example.com\r\nSubject: new %d\r\nMessage-ID: <new.%d@example.com>\r\n\r\nnew\r\n", i, i)
	})
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run again: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)
	want("the delta pass", api.LoginFigures{Working: 2, Refused: 1}, 3)
	if onDestination() != firstPass+3 {
		t.Errorf("the destinations hold %d messages, want %d: the delta pass copies the 3 new ones alone", onDestination(), firstPass+3)
	}
}
