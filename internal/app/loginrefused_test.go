package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestRefusedLoginsAreLeftOutOfScheduledPasses: an account whose server
// refused its login needs credentials: the schedule's passes leave it out,
// so the server's log (what fail2ban reads) gets no new failure from the
// service, and the pass says so; once the password is mended it runs
// again.
func TestRefusedLoginsAreLeftOutOfScheduledPasses(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	s := servicetest.Start(t, servicetest.Options{Clock: clock.Now, SchedulePoll: 20 * time.Millisecond})
	ctx := context.Background()
	users := map[string]string{"ann": "ann-pw", "bob": "bob-pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	for i, login := range []string{"ann", "bob"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 5}))
	}
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "source_login,source_password,destination_login,destination_password\n"+
		"ann,ann-pw,ann,ann-pw\nbob,a-wrong-pw,bob,bob-pw\n")
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)
	bob := accountByLogin(t, s, taskID, "bob")
	if bob.LoginRefused == nil || *bob.LoginRefused != api.AccountLoginRefusedSource || bob.State != api.AccountStateFailed {
		t.Fatalf("bob after a refused login: %s, login_refused %v; want failed, refused on the source", bob.State, bob.LoginRefused)
	}
	if ann := accountByLogin(t, s, taskID, "ann"); ann.LoginRefused != nil {
		t.Errorf("ann's login was not refused: %v", *ann.LoginRefused)
	}
	failures := old.FailedLogins(t, "bob")
	if failures == 0 {
		t.Fatalf("the source logged no failed login of bob:\n%s", old.LogTail())
	}

	if resp, err := s.Client.SetTaskScheduleWithResponse(ctx, taskID, api.ScheduleInput{EveryMinutes: 60}); err != nil || resp.JSON200 == nil {
		t.Fatalf("schedule: %v %v", err, resp)
	}
	clock.Add(61 * time.Minute)
	passes := waitPasses(t, s, taskID, 2)
	if passes[1].StartedBy != api.PassStarterSchedule || passes[1].Accounts != 1 {
		t.Errorf("pass 2: started by %s with %d accounts, want the schedule's with ann alone", passes[1].StartedBy, passes[1].Accounts)
	}
	if !hasEventSaying(taskEvents(t, s, taskID), "1 account left out: a server refused its login") {
		t.Error("pass 2 does not say it left bob out")
	}
	if n := old.FailedLogins(t, "bob"); n != failures {
		t.Errorf("the scheduled pass made the source log %d more failed logins of bob, want none", n-failures)
	}

	// Mended: the next scheduled pass runs bob.
	if resp, err := s.Client.UpdateAccountWithResponse(ctx, taskID, bob.Id, api.AccountInput{SourceLogin: "bob", SourcePassword: "bob-pw"}); err != nil ||
		resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("mend bob's password: %v %v", err, resp)
	}
	if bob := accountByLogin(t, s, taskID, "bob"); bob.LoginRefused != nil {
		t.Errorf("bob still needs credentials after his password was mended")
	}
	clock.Add(60 * time.Minute)
	passes = waitPasses(t, s, taskID, 3)
	if passes[2].Accounts != 2 {
		t.Errorf("pass 3 ran %d accounts, want both", passes[2].Accounts)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	if got, want := len(neu.Read(t, "bob").Messages), len(old.Read(t, "bob").Messages); got != want {
		t.Errorf("bob: %d messages on the destination, want %d", got, want)
	}
}

func accountByLogin(t *testing.T, s *servicetest.Service, taskID int64, login string) api.Account {
	t.Helper()
	resp, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, nil)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("accounts: %v %v", err, resp)
	}
	for _, a := range *resp.JSON200 {
		if strings.EqualFold(a.SourceLogin, login) {
			return a
		}
	}
	t.Fatalf("no account %s", login)
	return api.Account{}
}
