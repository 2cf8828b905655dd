package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// testVerifyBothServers: a message deleted on the new server alone is not
// seen by a delta pass, which trusts an unchanged source; on the task
// page, "Verify both servers" asks first, then starts a pass that looks
// at both servers of every account, listed as a verification, which
// copies the message again.
func testVerifyBothServers(t *testing.T, browser context.Context) {
	s := startSiteWith(t, "", servicetest.Options{})
	old, neu, taskID := s.aliceTask(t, "verified move", 7, 8)
	ctx := context.Background()
	all := len(old.Read(t, "alice").Messages)
	for pass := 1; pass <= 2; pass++ {
		if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
			t.Fatalf("run %d: %v %v", pass, err, resp)
		}
		waitPassesEnded(t, s, taskID, pass)
		if pass == 1 {
			neu.ExpungeFirst(t, "alice", "a")
		}
	}
	if n := len(neu.Read(t, "alice").Messages); n != all-1 {
		t.Fatalf("after a delta pass the new server has %d of %d messages, want one less: the delta should have trusted the unchanged source", n, all)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#event-log", "the destination was not opened: a verifying pass or the final pass looks at it")
	// The page redraws as the pass's last events come: a person clicks
	// again when the first click lands on the old button.
	dialogOpen := `document.querySelector('dialog[open] #confirm-question') !== null`
	tb.clickUntil(`#follow-up button[data-action="verify"]`, dialogOpen, "the verification's question")
	tb.confirm("Verify the 1 account of verified move on both servers?", false)
	if runs, err := s.Client.ListTaskPassesWithResponse(ctx, taskID); err != nil || runs.JSON200 == nil || len(*runs.JSON200) != 2 {
		t.Fatalf("after answering no: %v %v, want the two passes alone", err, runs)
	}
	tb.clickUntil(`#follow-up button[data-action="verify"]`, dialogOpen, "the verification's question")
	tb.confirm("Verify the 1 account of verified move on both servers?", true)
	tb.waitText("#task-summary ~ .notice", "Running 1 account: verifying both servers.")
	tb.waitText("#passes", "verification")
	if runs := waitPassesEnded(t, s, taskID, 3); runs[2].StartedBy != api.PassStarterVerify || runs[2].MessagesCopied != 1 {
		t.Errorf("pass 3 was started by %s and copied %d, want a verification that copied the lost message", runs[2].StartedBy, runs[2].MessagesCopied)
	}
	if n := len(neu.Read(t, "alice").Messages); n != all {
		t.Errorf("after the verification the new server has %d of %d messages", n, all)
	}
	tb.screenshot("verify-both-servers")
}

// waitPassesEnded waits until the task has n passes, the last ended, and
// returns them.
func waitPassesEnded(t *testing.T, s *site, taskID int64, n int) []api.Pass {
	t.Helper()
	var runs []api.Pass
	testsupport.Eventually(t, 60*time.Second, func() error {
		resp, err := s.Client.ListTaskPassesWithResponse(context.Background(), taskID)
		if err != nil || resp.JSON200 == nil {
			return fmt.Errorf("passes: %v %v", err, resp)
		}
		if runs = *resp.JSON200; len(runs) != n || runs[n-1].EndedAt == nil {
			return fmt.Errorf("%d passes, want %d ended", len(runs), n)
		}
		return nil
	})
	return runs
}
