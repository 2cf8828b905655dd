package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// TestARerunInTheSamePassCountsBothRuns: an account that completed is run
// again while its pass goes on (new mail came, a retry joins the pass); the
// pass's record of it, the pass's figures and the task's totals to date
// count what both runs copied, not the second alone.
func TestARerunInTheSamePassCountsBothRuns(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	users := map[string]string{"ann": "a", "big": "b"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "ann", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 6}))
	old.Load(t, "big", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 2, LargeMessages: 1, LargeSize: 4 << 20}))
	// big's copy crawls, so that the pass is still under way when ann runs again.
	slowHost, slowPort := imaptest.SlowProxy(t, old.Addr(), 60_000)
	taskID := createTask(t, s, createEndpoint(t, s, slowHost, slowPort), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "ann,a\nbig,b\n")
	ids := accountIDs(t, s, taskID)
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, &api.RunTaskParams{}, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	annCompleted := func(what string) api.Account {
		t.Helper()
		var ann api.Account
		testsupport.Eventually(t, 60*time.Second, func() error {
			resp, err := s.Client.GetAccountWithResponse(ctx, taskID, ids["ann"])
			if err != nil || resp.JSON200 == nil {
				return fmt.Errorf("ann: %v %v", err, resp)
			}
			if ann = *resp.JSON200; ann.State != api.AccountStateCompleted {
				return fmt.Errorf("ann is %s, want completed %s", ann.State, what)
			}
			return nil
		})
		return ann
	}
	firstRun := annCompleted("by her first run")
	first := firstRun.Progress.MessagesCopied
	if first == 0 {
		t.Fatal("ann's first run copied nothing")
	}
	old.Load(t, "ann", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 9, Messages: 3}))
	if resp, err := s.Client.RunAccountWithResponse(ctx, taskID, ids["ann"]); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run ann again: %v %v", err, resp)
	}
	var second int64
	testsupport.Eventually(t, 60*time.Second, func() error {
		ann := annCompleted("by her second run")
		if ann.StartedAt == nil || !ann.StartedAt.After(*firstRun.StartedAt) {
			return fmt.Errorf("ann's second run has not ended yet")
		}
		if second = ann.Progress.MessagesCopied; second == 0 {
			return fmt.Errorf("ann's second run copied nothing")
		}
		return nil
	})
	if resp, err := s.Client.CancelAccountWithResponse(ctx, taskID, ids["big"]); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel big: %v %v", err, resp)
	}
	passes := waitPasses(t, s, taskID, 1)
	runs, err := s.Client.ListAccountPassesWithResponse(ctx, taskID, ids["ann"])
	if err != nil || runs.JSON200 == nil || len(*runs.JSON200) != 1 {
		t.Fatalf("ann's passes: %v %v, want one", err, runs)
	}
	if got := (*runs.JSON200)[0].MessagesCopied; got != first+second {
		t.Errorf("ann's record of pass 1 says %d copied, want both runs' %d + %d", got, first, second)
	}
	bigRuns, err := s.Client.ListAccountPassesWithResponse(ctx, taskID, ids["big"])
	if err != nil || bigRuns.JSON200 == nil || len(*bigRuns.JSON200) != 1 {
		t.Fatalf("big's passes: %v %v", err, bigRuns)
	}
	if want := first + second + (*bigRuns.JSON200)[0].MessagesCopied; passes[0].MessagesCopied != want {
		t.Errorf("pass 1 says %d copied, want %d: ann's two runs and big's", passes[0].MessagesCopied, want)
	}
}
