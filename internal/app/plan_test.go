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
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// waitPlans waits until no plan of the task is pending.
func waitPlans(t *testing.T, s *servicetest.Service, taskID int64, accounts int) api.TaskPlan {
	t.Helper()
	var plan api.TaskPlan
	testsupport.Eventually(t, 30*time.Second, func() error {
		resp, err := s.Client.GetTaskPlanWithResponse(context.Background(), taskID, nil)
		if err != nil || resp.JSON200 == nil {
			return fmt.Errorf("plan: %v %v", err, resp)
		}
		plan = *resp.JSON200
		if len(plan.Accounts) != accounts || plan.Pending > 0 {
			return fmt.Errorf("%d plans, %d pending", len(plan.Accounts), plan.Pending)
		}
		return nil
	})
	return plan
}

// TestPlanBeforeTheRun: a plan of a task's accounts reads both servers and
// copies nothing; it finds the account whose destination quota is too
// small, and a folder collision, in words; a task that refuses blocked
// accounts runs the others and says how many it left out; the estimate
// comes from the rate of the pass. The task's plan lists the accounts in
// brief, a page at a time and filtered; an account's plan is whole.
func TestPlanBeforeTheRun(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	users := map[string]string{"ann": "pw", "bob": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users, QuotaBytes: 60 << 10})
	date := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	message := func(folder string, n, pad int) imaptest.Message {
		return imaptest.Message{Folder: folder, Date: date, Body: []byte(fmt.Sprintf(
			"From: a@example.org\r\nSubject: %s %d\r\nMessage-ID: <%d.%d@example.org>\r\n\r\n%s\r\n", folder, n, pad, n, strings.Repeat("x", pad)))}
	}
	// ann fits; bob has 100 KB for a 60 KB quota, and two folders that
	// become one on a destination whose delimiter is ".".
	old.Load(t, "ann", imaptest.Corpus{Messages: []imaptest.Message{message("INBOX", 1, 2_000), message("INBOX", 2, 2_000)}})
	var bob imaptest.Corpus
	for i := range 10 {
		bob.Messages = append(bob.Messages, message("INBOX", i, 10_000))
	}
	bob.Messages = append(bob.Messages, message("Q1.2024", 1, 100), message("Q1_2024", 1, 100))
	old.Load(t, "bob", bob)
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), `{"refuse_blocked": true}`)
	importAccounts(t, s, taskID, "ann,pw\nbob,pw\n")

	resp, err := s.Client.PlanTaskWithResponse(ctx, taskID, api.AccountSelection{})
	if err != nil || resp.JSON202 == nil || resp.JSON202.Accounts != 2 {
		t.Fatalf("plan: %v %v", err, resp)
	}
	plan := waitPlans(t, s, taskID, 2)
	if plan.Done != 2 || plan.Blocked != 1 || plan.EstimateSeconds != nil {
		t.Errorf("plan: %d done, %d blocked, estimate %v; want 2, 1, none before a pass", plan.Done, plan.Blocked, plan.EstimateSeconds)
	}
	byLogin := map[string]api.AccountPlanSummary{}
	for _, a := range plan.Accounts {
		byLogin[a.SourceLogin] = a
	}
	if a := byLogin["ann"]; a.Blocking || a.State != api.PlanStateDone || a.SourceMessages != 2 || len(a.Problems) != 0 || a.Folders == 0 {
		t.Errorf("ann's plan: %+v", a)
	}
	b := byLogin["bob"]
	if !b.Blocking || b.State != api.PlanStateDone || b.SourceMessages != 12 || b.QuotaFree < 0 || b.QuotaFree > 60<<10 {
		t.Fatalf("bob's plan: %+v, want blocking", b)
	}
	var words []string
	for _, p := range b.Problems {
		words = append(words, string(p.Kind)+": "+p.Words)
	}
	if all := strings.Join(words, "\n"); !strings.Contains(all, "quota: the destination's quota leaves ") ||
		!strings.Contains(all, "collision: Q1.2024 would become INBOX.Q1_2024 on the destination") {
		t.Errorf("bob's problems:\n%s", all)
	}
	// The filter lists bob alone; a page of one lists ann, then bob after her.
	problems, limit := api.PlanFilterProblems, 1
	if got, err := s.Client.GetTaskPlanWithResponse(ctx, taskID, &api.GetTaskPlanParams{Filter: &problems}); err != nil || got.JSON200 == nil ||
		len(got.JSON200.Accounts) != 1 || got.JSON200.Accounts[0].SourceLogin != "bob" || got.JSON200.Listed != 1 || got.JSON200.Done != 2 {
		t.Errorf("the accounts with problems: %v %+v", err, got.JSON200)
	}
	first, err := s.Client.GetTaskPlanWithResponse(ctx, taskID, &api.GetTaskPlanParams{Limit: &limit})
	if err != nil || first.JSON200 == nil || len(first.JSON200.Accounts) != 1 || first.JSON200.Accounts[0].SourceLogin != "ann" || first.JSON200.Listed != 2 {
		t.Fatalf("the first page: %v %+v", err, first.JSON200)
	}
	after := first.JSON200.Accounts[0].AccountId
	if next, err := s.Client.GetTaskPlanWithResponse(ctx, taskID, &api.GetTaskPlanParams{Limit: &limit, After: &after}); err != nil || next.JSON200 == nil ||
		len(next.JSON200.Accounts) != 1 || next.JSON200.Accounts[0].SourceLogin != "bob" {
		t.Errorf("the next page: %v %+v", err, next.JSON200)
	}
	bad := api.PlanFilter("broken")
	if got, err := s.Client.GetTaskPlanWithResponse(ctx, taskID, &api.GetTaskPlanParams{Filter: &bad}); err != nil ||
		got.StatusCode() != http.StatusBadRequest || string(got.Body) != `filter "broken" is not one of all, problems, blocking, failed, pending` {
		t.Errorf("a bad filter: %v %d %s", err, got.StatusCode(), got.Body)
	}
	// bob's plan, whole: the folder that would land on another's name.
	whole, err := s.Client.GetAccountPlanWithResponse(ctx, taskID, b.AccountId)
	if err != nil || whole.JSON200 == nil || whole.JSON200.Plan == nil || len(whole.JSON200.Plan.Folders) != b.Folders {
		t.Fatalf("bob's whole plan: %v %v", err, whole)
	}
	moved := 0
	for _, f := range whole.JSON200.Plan.Folders {
		if f.Moved == "collision" {
			moved++
		}
	}
	if moved != 1 || !whole.JSON200.Blocking {
		t.Errorf("bob's folders: %+v", whole.JSON200.Plan.Folders)
	}
	if got, err := s.Client.GetAccountPlanWithResponse(ctx, taskID, b.AccountId+100); err != nil || got.StatusCode() != http.StatusNotFound {
		t.Errorf("the plan of no account: %v %v", err, got)
	}
	if n := len(neu.Read(t, "bob").Messages) + len(neu.Read(t, "ann").Messages); n != 0 {
		t.Errorf("the plan copied %d messages", n)
	}

	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{Q: "bob"}); err != nil ||
		resp.StatusCode() != http.StatusConflict || !strings.HasPrefix(string(resp.Body), "every selected account's plan has a blocking problem") {
		t.Errorf("run of bob alone: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	run, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{})
	if err != nil || run.JSON202 == nil || run.JSON202.Accounts != 1 {
		t.Fatalf("run: %v %v, want ann alone", err, run)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	var started string
	for _, e := range taskEvents(t, s, taskID) {
		if e.Kind == api.EventKindRunStarted {
			started = e.Message
		}
	}
	if !strings.HasSuffix(started, "; 1 account left out: its plan has a blocking problem") {
		t.Errorf("run.started says %q", started)
	}
	if n := len(neu.Read(t, "bob").Messages); n != 0 {
		t.Errorf("bob, blocked, has %d messages on the destination", n)
	}
	if plan := waitPlans(t, s, taskID, 2); plan.RateBytesPerSecond <= 0 || plan.EstimateSeconds == nil {
		t.Errorf("after a pass: rate %v, estimate %v; want both", plan.RateBytesPerSecond, plan.EstimateSeconds)
	}
	// An account added since has no plan, and says so.
	importAccounts(t, s, taskID, "cat,pw\n")
	cat := b.AccountId + 1
	if got, err := s.Client.GetAccountPlanWithResponse(ctx, taskID, cat); err != nil || got.StatusCode() != http.StatusNotFound ||
		!strings.HasPrefix(string(got.Body), "the account has no plan yet") {
		t.Errorf("the plan of an account never planned: %v %d %s", err, got.StatusCode(), got.Body)
	}
}
