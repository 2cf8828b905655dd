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
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// TestAServerThatPenalisesFailures: a source Dovecot with its penalty on
// (2 s for a failed login, more for an address that keeps failing, good
// logins too), and a list that is mostly dead logins, as a hosting
// panel's is. The accounts that passed their login test run while the
// test still goes on; the refusals say, in words, that the server delays
// logins, and the task names the server that delays them, its pace and
// what it means for the accounts left; and the final pass leaves the refused accounts out,
// causing no failed login of its own.
func TestAServerThatPenalisesFailures(t *testing.T) {
	t.Parallel()
	// The operator trusts this server with more failures than the
	// fail2ban-safe default: the server's own delays are what is measured.
	s := servicetest.Start(t, servicetest.Options{Workers: worker.Options{
		LoginFailureLimit: migration.LoginFailureLimit{Max: 10000, Window: 10 * time.Minute}}})
	ctx := context.Background()
	users := map[string]string{"good1": "pw1", "good2": "pw2"}
	csv := "good1,pw1\ngood2,pw2\n"
	var dead []string
	for i := range 14 {
		login := fmt.Sprintf("dead%02d", i)
		users[login], dead = "right-"+login, append(dead, login)
		csv += login + ",not-" + login + "\n"
	}
	old := imaptest.StartDovecot(t, imaptest.Options{Users: users, AuthPenalty: true})
	neu := imaptest.StartDovecot(t, imaptest.Options{Users: users})
	for _, login := range []string{"good1", "good2"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 3, Messages: 5}))
	}
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, csv)
	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}

	// The good ones, once they passed, run while the dead ones are tested.
	servicetest.WaitTask(t, s.Client, taskID, func(task api.Task) error {
		if task.Logins.Working < 2 {
			return fmt.Errorf("%d logins work so far", task.Logins.Working)
		}
		return nil
	})
	passed := api.LoginTestFilterPassed
	run, err := s.Client.RunTaskWithResponse(ctx, taskID, &api.RunTaskParams{}, api.AccountSelection{LoginTest: &passed})
	if err != nil || run.StatusCode() != http.StatusAccepted {
		t.Fatalf("run the accounts that passed: %v %v", err, run)
	}
	// The task says which server delays its logins, at what pace, and
	// what it means, in words, once it has tested a failure or two: on
	// a loaded machine the good logins alone can make the test go slowly,
	// and the words then give the task's pace without naming a server.
	task := servicetest.WaitTask(t, s.Client, taskID, func(task api.Task) error {
		if !strings.Contains(task.Tests.Pace, "(the source)") && task.Tests.Running {
			return fmt.Errorf("no server named yet, %d of %d tested: %q", task.Tests.Tested, task.Tests.Total, task.Tests.Pace)
		}
		return nil
	})
	if !task.Tests.Running {
		t.Fatalf("the login test ended before its pace was told (%+v): make the list of dead logins longer", task.Tests)
	}
	if pace := task.Tests.Pace; !strings.HasPrefix(pace, old.Host+" (the source) takes about ") ||
		!strings.Contains(pace, "as a server that delays logins after failures does") ||
		!strings.Contains(pace, "left would take") || !strings.Contains(pace, "the 2 whose logins work can run now") {
		t.Errorf("the test's pace in words: %q", pace)
	}
	waitPasses(t, s, taskID, 1)
	for _, login := range []string{"good1", "good2"} {
		if got, want := len(neu.Read(t, login).Messages), len(old.Read(t, login).Messages); got != want {
			t.Errorf("%s has %d of its %d messages on the destination", login, got, want)
		}
	}

	// The test ends; some refusal says the server delays logins.
	var words string
	testsupport.Eventually(t, 3*time.Minute, func() error {
		task, err := s.Client.GetTaskWithResponse(ctx, taskID)
		if err != nil || task.JSON200 == nil || task.JSON200.Tests.Running {
			return fmt.Errorf("the login test still runs: %v", err)
		}
		accounts, err := s.Client.ListAccountsWithResponse(ctx, taskID, &api.ListAccountsParams{})
		if err != nil || accounts.JSON200 == nil {
			return fmt.Errorf("accounts: %v", err)
		}
		for _, a := range *accounts.JSON200 {
			if a.SourceTest != nil && strings.Contains(a.SourceTest.Error, "it delays logins after failures") {
				words = a.SourceTest.Error
			}
		}
		return nil
	})
	if words == "" {
		t.Error("no refusal says that the server delays logins after failures")
	}
	failures := func() int {
		n := 0
		for _, login := range dead {
			n += old.FailedLogins(t, login)
		}
		return n
	}
	before := failures()
	if before < len(dead) {
		t.Fatalf("the server saw %d failed logins of %d dead accounts", before, len(dead))
	}

	// The final pass leaves the refused accounts out: no failed login.
	if resp, err := s.Client.StartFinalPassWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("final pass: %v %v", err, resp)
	}
	waitPasses(t, s, taskID, 2)
	if after := failures(); after != before {
		t.Errorf("the final pass caused %d failed logins of accounts already refused", after-before)
	}
}
