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
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// TestLoginTestsKeepUnderTheFailedLoginLimit: a login test of a list with
// many wrong passwords causes no more failed logins on the source than
// the limit allows in its window, as a fail2ban watching the server's log
// would count them, says in the log that it waits and why, and still
// tests every account.
func TestLoginTestsKeepUnderTheFailedLoginLimit(t *testing.T) {
	t.Parallel()
	const limit, window = 3, 3 * time.Second
	s := servicetest.Start(t, servicetest.Options{Workers: worker.Options{
		LoginFailureLimit: migration.LoginFailureLimit{Max: limit, Window: window}}})
	users := map[string]string{"ann": "a", "bob": "b"}
	var csv strings.Builder
	var dead []string
	for i := range 7 {
		login := fmt.Sprintf("dead%d", i)
		users[login] = "right-" + login
		dead = append(dead, login)
		fmt.Fprintf(&csv, "%s,wrong-pw,%s,right-%s\n", login, login, login)
	}
	csv.WriteString("ann,a\nbob,b\n")
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), `{"parallel_accounts": 4}`)
	importAccounts(t, s, taskID, csv.String())
	failures := func() int {
		n := 0
		for _, login := range dead {
			n += old.FailedLogins(t, login)
		}
		return n
	}

	started := time.Now()
	if resp, err := s.Client.TestTaskWithResponse(context.Background(), taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}
	time.Sleep(window / 2)
	if n := failures(); n > limit {
		t.Errorf("%d failed logins on the source within half a window, want at most %d", n, limit)
	}
	// Under way, the test says how long it should take still.
	servicetest.WaitTask(t, s.Client, taskID, func(task api.Task) error {
		if !task.Tests.Running || task.Tests.Tested == 0 || task.Tests.TimeLeftSeconds == nil || task.Tests.StartedAt == nil {
			return fmt.Errorf("tests %+v, want one under way with a time left", task.Tests)
		}
		return nil
	})
	task := servicetest.WaitTestsDone(t, s.Client, taskID)
	if want := (api.TestFigures{Total: 9, Tested: 9, Failed: 7}); testCounts(task.Tests) != want {
		t.Errorf("tests %+v, want %+v", task.Tests, want)
	}
	if n := failures(); n != 7 {
		t.Errorf("%d failed logins on the source, want one per dead login", n)
	}
	// 7 failures at 3 per window: the last ones waited two windows.
	if took := time.Since(started); took < 2*window {
		t.Errorf("the test took %s: the limit held nothing back", took)
	}
	if !hasEventSaying(taskEvents(t, s, taskID), fmt.Sprintf("refused %d logins within %s, the limit", limit, window)) {
		t.Error("the log does not say the test waits for the server's failed-login window")
	}
}
