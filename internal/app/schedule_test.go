package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// testClock is a clock the test moves on: the service's schedules read it.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Now().Truncate(time.Minute)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func taskPasses(t *testing.T, s *servicetest.Service, taskID int64) []api.Pass {
	t.Helper()
	resp, err := s.Client.ListTaskPassesWithResponse(context.Background(), taskID)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("passes: %v %v", err, resp)
	}
	return *resp.JSON200
}

func lifecycle(t *testing.T, s *servicetest.Service, taskID int64) api.Lifecycle {
	t.Helper()
	resp, err := s.Client.GetTaskLifecycleWithResponse(context.Background(), taskID)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("lifecycle: %v %v", err, resp)
	}
	return *resp.JSON200
}

// waitPasses waits until the task has n passes, all ended.
func waitPasses(t *testing.T, s *servicetest.Service, taskID int64, n int) []api.Pass {
	t.Helper()
	var passes []api.Pass
	testsupport.Eventually(t, 30*time.Second, func() error {
		passes = taskPasses(t, s, taskID)
		if len(passes) != n || passes[n-1].EndedAt == nil {
			return fmt.Errorf("%d passes, want %d ended", len(passes), n)
		}
		return nil
	})
	return passes
}

// TestScheduledPassesRunOnceOnOneOfTwoProcesses: two processes share the
// database and a clock the test moves on. A schedule of a delta pass every
// hour starts one pass per hour, never two, copies the mail that came in
// meanwhile, goes on after both processes restart, and stops at its end.
func TestScheduledPassesRunOnceOnOneOfTwoProcesses(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	opts := servicetest.Options{Clock: clock.Now, SchedulePoll: 20 * time.Millisecond}
	first := servicetest.Start(t, opts)
	opts.Beside = first
	second := servicetest.Start(t, opts)
	ctx := context.Background()

	users := map[string]string{"ann": "pw", "bob": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "ann", smallInbox("bulk", 4))
	old.Load(t, "bob", smallInbox("bulk", 2))
	taskID := createTask(t, first, createEndpoint(t, first, old.Host, old.Port), createEndpoint(t, first, neu.Host, neu.Port), "")
	importAccounts(t, first, taskID, "ann,pw\nbob,pw\n")
	if l := lifecycle(t, first, taskID); l.Stage != api.StagePlanned {
		t.Errorf("before any pass: %s %q, want planned", l.Stage, l.Words)
	}

	for _, bad := range []api.ScheduleInput{
		{EveryMinutes: 60, At: []string{"06:00"}},
		{At: []string{"25:00"}},
		{EveryMinutes: 60, TimeZone: "Mars/Olympus"},
		{},
		{EveryMinutes: 60, Until: new(clock.Now().Add(-time.Hour))},
	} {
		if resp, err := second.Client.SetTaskScheduleWithResponse(ctx, taskID, bad); err != nil || resp.StatusCode() != http.StatusBadRequest {
			t.Errorf("schedule %+v: %v %d %s, want 400", bad, err, resp.StatusCode(), resp.Body)
		}
	}
	until := clock.Now().Add(3*time.Hour + 30*time.Minute)
	set, err := second.Client.SetTaskScheduleWithResponse(ctx, taskID, api.ScheduleInput{EveryMinutes: 60, Until: &until})
	if err != nil || set.JSON200 == nil {
		t.Fatalf("set the schedule: %v %v", err, set)
	}
	if next := set.JSON200.NextPassAt; next == nil || !next.Equal(clock.Now().Add(time.Hour)) ||
		!strings.HasPrefix(set.JSON200.Words, "delta passes every 1 hour until ") {
		t.Errorf("schedule %+v, want the first pass in an hour", set.JSON200)
	}

	// While the clock stands still nothing starts, however often the
	// processes look.
	time.Sleep(200 * time.Millisecond)
	if n := len(taskPasses(t, first, taskID)); n != 0 {
		t.Fatalf("%d passes before the first slot", n)
	}
	for slot := 1; slot <= 3; slot++ {
		if slot == 2 {
			old.Load(t, "ann", smallInbox("delta", 1)) // mail that came in since the first pass
		}
		if slot == 3 {
			// Both processes stop; a new one takes over the schedule.
			first.Stop()
			second.Stop()
			second = servicetest.Start(t, opts)
		}
		clock.Add(time.Hour)
		waitPasses(t, second, taskID, slot)
		time.Sleep(200 * time.Millisecond) // ten looks of each process
		if passes := taskPasses(t, second, taskID); len(passes) != slot {
			t.Fatalf("after slot %d: %d passes, want one per slot", slot, len(passes))
		}
		if p := taskPasses(t, second, taskID)[slot-1]; p.StartedBy != api.PassStarterSchedule || p.State == nil || *p.State != api.TaskStateCompleted {
			t.Errorf("pass %d started by %s ended %v, want a completed scheduled pass", slot, p.StartedBy, p.State)
		}
		if l := lifecycle(t, second, taskID); l.Stage != api.StageInSync || !strings.Contains(l.Words, fmt.Sprintf("pass %d ended", slot)) {
			t.Errorf("after slot %d: %s %q, want in sync", slot, l.Stage, l.Words)
		}
	}
	if n := len(neu.Read(t, "ann").Messages); n != 5 {
		t.Errorf("ann has %d messages on the destination, want the 4 of the bulk and the 1 of the delta", n)
	}
	// The end: no slot is left before until.
	clock.Add(time.Hour)
	time.Sleep(200 * time.Millisecond)
	if n := len(taskPasses(t, second, taskID)); n != 3 {
		t.Errorf("%d passes after the schedule's end, want 3", n)
	}
	if sch, err := second.Client.GetTaskScheduleWithResponse(ctx, taskID); err != nil || sch.JSON200 == nil || sch.JSON200.NextPassAt != nil {
		t.Errorf("schedule after its end: %v %v, want no next pass", err, sch)
	}
	if l := lifecycle(t, second, taskID); !strings.Contains(l.Words, "no pass scheduled") {
		t.Errorf("lifecycle after the end: %q", l.Words)
	}
	started := 0
	for _, e := range taskEvents(t, second, taskID) {
		if e.Kind == api.EventKindRunStarted {
			started++
		}
	}
	if started != 3 {
		t.Errorf("%d run.started events, want 3", started)
	}
}

// TestFinalPassNowWaitsForTheRunningPass: "final pass now" during a pass
// does not start a second one beside it; the final pass starts when it
// ends, and its end is told in the lifecycle, the log and the webhook.
// While the task is paused no pass starts, scheduled or by hand; on resume
// the pass that came due starts.
func TestFinalPassNowWaitsForTheRunningPass(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	s := servicetest.Start(t, servicetest.Options{Clock: clock.Now, SchedulePoll: 20 * time.Millisecond,
		Delivery: delivery.Options{Poll: 20 * time.Millisecond}})
	ctx := context.Background()
	const secret = "whsec-final-0123456789"
	receiver := &webhookReceiver{secret: secret}
	hook := httptest.NewServer(receiver)
	t.Cleanup(hook.Close)

	users := map[string]string{"ann": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "ann", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 3, Messages: 20}))
	// The source answers slowly: a pass takes seconds.
	host, port := imaptest.SlowProxy(t, old.Addr(), 40_000)
	taskID := createTask(t, s, createEndpoint(t, s, host, port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "ann,pw\n")
	if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: hook.URL, Secret: secret}); err != nil || resp.JSON200 == nil {
		t.Fatalf("webhook: %v %v", err, resp)
	}

	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	if resp, err := s.Client.StartFinalPassWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("final pass now: %v %v", err, resp)
	}
	time.Sleep(300 * time.Millisecond)
	if passes := taskPasses(t, s, taskID); len(passes) != 1 || passes[0].EndedAt != nil {
		t.Fatalf("passes while the first runs: %+v, want it alone", passes)
	}
	if l := lifecycle(t, s, taskID); l.Stage != api.StageCopying || !strings.Contains(l.Words, "final pass ") {
		t.Errorf("lifecycle while the first pass runs: %s %q, want copying with the final pass due", l.Stage, l.Words)
	}
	passes := waitPasses(t, s, taskID, 2)
	if passes[0].StartedBy != api.PassStarterManual || passes[1].StartedBy != api.PassStarterFinal ||
		passes[1].StartedAt.Before(*passes[0].EndedAt) {
		t.Errorf("passes %+v, want the final one after the first ended", passes)
	}
	if l := lifecycle(t, s, taskID); l.Stage != api.StageVerified || !strings.HasPrefix(l.Words, "verified: final pass 2 ended") {
		t.Errorf("after the final pass: %s %q, want verified", l.Stage, l.Words)
	}
	if !hasEvent(taskEvents(t, s, taskID), api.EventKindFinalVerified, 0, "") {
		t.Error("no final.verified event")
	}
	testsupport.Eventually(t, 10*time.Second, func() error {
		for _, b := range receiver.received() {
			if b.Kind == "final.verified" && b.Event.TaskID == taskID {
				return nil
			}
		}
		return fmt.Errorf("the receiver has %d calls, none final.verified", len(receiver.received()))
	})
	if n, want := len(neu.Read(t, "ann").Messages), len(old.Read(t, "ann").Messages); n != want {
		t.Errorf("%d messages on the destination, want the source's %d", n, want)
	}

	// Paused: neither the schedule nor a person starts a pass.
	if resp, err := s.Client.PauseTaskWithResponse(ctx, taskID, api.PauseInput{}); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("pause: %v %v", err, resp)
	}
	if resp, err := s.Client.PauseTaskWithResponse(ctx, taskID, api.PauseInput{}); err != nil || resp.StatusCode() != http.StatusConflict || string(resp.Body) != "task is paused" {
		t.Errorf("pause twice: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusConflict || string(resp.Body) != "task is paused" {
		t.Errorf("run while paused: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	if resp, err := s.Client.SetTaskScheduleWithResponse(ctx, taskID, api.ScheduleInput{EveryMinutes: 30}); err != nil || resp.JSON200 == nil {
		t.Fatalf("schedule: %v %v", err, resp)
	}
	clock.Add(2 * time.Hour)
	time.Sleep(200 * time.Millisecond)
	if n := len(taskPasses(t, s, taskID)); n != 2 {
		t.Errorf("%d passes while paused, want 2", n)
	}
	if l := lifecycle(t, s, taskID); l.PausedAt == nil || !strings.HasPrefix(l.Words, "paused since ") {
		t.Errorf("lifecycle while paused: %q", l.Words)
	}
	if resp, err := s.Client.ResumeTaskWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("resume: %v %v", err, resp)
	}
	passes = waitPasses(t, s, taskID, 3)
	if passes[2].StartedBy != api.PassStarterSchedule {
		t.Errorf("after resume, pass 3 started by %s, want the schedule's pass that came due", passes[2].StartedBy)
	}
	if resp, err := s.Client.ResumeTaskWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusConflict || string(resp.Body) != "task is not paused" {
		t.Errorf("resume twice: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	if resp, err := s.Client.RemoveTaskScheduleWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Errorf("remove the schedule: %v %v", err, resp)
	}
	// No pass is to come; which pass was the final one stays known.
	if resp, err := s.Client.GetTaskScheduleWithResponse(ctx, taskID); err != nil || resp.JSON200 == nil ||
		resp.JSON200.EveryMinutes != 0 || resp.JSON200.NextPassAt != nil || resp.JSON200.FinalPass != 2 {
		t.Errorf("the schedule removed: %v %v", err, resp)
	}
}

// TestFinalPassCannotVerifyNothing: "final pass now" on a task without
// accounts, or before any of its accounts completed a pass, is refused in
// words; a scheduled final pass that comes due on such a task is given up
// with an entry in the log, and an account imported later does not start
// it. After a pass, the final pass runs and verifies.
func TestFinalPassCannotVerifyNothing(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	s := servicetest.Start(t, servicetest.Options{Clock: clock.Now, SchedulePoll: 20 * time.Millisecond})
	ctx := context.Background()
	users := map[string]string{"ann": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "ann", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 5, Messages: 5}))
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")

	finalNow := func(wantStatus int, wantBody string) {
		t.Helper()
		resp, err := s.Client.StartFinalPassWithResponse(ctx, taskID)
		if err != nil || resp.StatusCode() != wantStatus || !strings.HasPrefix(string(resp.Body), wantBody) {
			t.Errorf("final pass now: %v %d %q, want %d %q", err, resp.StatusCode(), resp.Body, wantStatus, wantBody)
		}
	}
	finalNow(http.StatusConflict, "the task has no accounts: a final pass would verify nothing")

	finalAt := clock.Now().Add(time.Hour)
	if resp, err := s.Client.SetTaskScheduleWithResponse(ctx, taskID, api.ScheduleInput{FinalAt: &finalAt}); err != nil || resp.JSON200 == nil {
		t.Fatalf("schedule the final pass: %v %v", err, resp)
	}
	clock.Add(2 * time.Hour)
	testsupport.Eventually(t, 10*time.Second, func() error {
		resp, err := s.Client.GetTaskScheduleWithResponse(ctx, taskID)
		if err != nil || resp.JSON200 == nil || resp.JSON200.FinalAt != nil {
			return fmt.Errorf("the schedule after the final pass came due on no accounts: %v %+v", err, resp.JSON200)
		}
		return nil
	})
	if !hasEventSaying(taskEvents(t, s, taskID), "the final pass was not started: the task has no accounts") {
		t.Error("the log does not say why the final pass was given up")
	}
	importAccounts(t, s, taskID, "ann,pw\n")
	time.Sleep(300 * time.Millisecond) // ten looks of the schedule
	if passes := taskPasses(t, s, taskID); len(passes) != 0 {
		t.Errorf("passes after an account was imported: %+v, want none: the final pass was given up", passes)
	}
	finalNow(http.StatusConflict, "no account of the task has completed a pass yet: run a pass first")

	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	finalNow(http.StatusAccepted, "")
	passes := waitPasses(t, s, taskID, 2)
	if passes[1].StartedBy != api.PassStarterFinal {
		t.Errorf("pass 2 started by %s, want the final pass", passes[1].StartedBy)
	}
	if l := lifecycle(t, s, taskID); l.Stage != api.StageVerified {
		t.Errorf("after the final pass: %s %q, want verified", l.Stage, l.Words)
	}
}

func hasEventSaying(events []api.Event, words string) bool {
	for _, e := range events {
		if strings.Contains(e.Message, words) {
			return true
		}
	}
	return false
}
