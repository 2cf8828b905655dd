package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestFinalPassLeavingOutARefusedLoginIsNotVerified: the final pass
// leaves out an account whose server refused its login (it would feed the
// server's lock-out), so that account's mail is not on the destination:
// the task must not say "verified", and its words name what was left out.
func TestFinalPassLeavingOutARefusedLoginIsNotVerified(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{SchedulePoll: 20 * time.Millisecond})
	ctx := context.Background()
	_, _, taskID := annAndBob(t, s, 4, "ann,ann-pw,ann,ann-pw\nbob,a-wrong-pw,bob,bob-pw\n")
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	waitPasses(t, s, taskID, 1)
	if resp, err := s.Client.StartFinalPassWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("final pass: %v %v", err, resp)
	}
	final := waitPasses(t, s, taskID, 2)[1]
	if final.StartedBy != api.PassStarterFinal || final.Accounts != 1 {
		t.Errorf("the final pass was started by %s with %d accounts, want final with ann alone", final.StartedBy, final.Accounts)
	}
	life, err := s.Client.GetTaskLifecycleWithResponse(ctx, taskID)
	if err != nil || life.JSON200 == nil {
		t.Fatalf("lifecycle: %v %v", err, life)
	}
	if life.JSON200.Stage != api.StageUnverified {
		t.Errorf("after a final pass that left bob out the task is %s (%s), want unverified", life.JSON200.Stage, life.JSON200.Words)
	}
	events := taskEvents(t, s, taskID)
	for _, e := range events {
		if e.Kind == api.EventKindFinalVerified {
			t.Errorf("final.verified though bob was left out: %s", e.Message)
		}
		if e.Kind == api.EventKindFinalUnverified && !strings.Contains(e.Message, "1 failed") {
			t.Errorf("final.unverified does not count bob: %s", e.Message)
		}
	}
}
