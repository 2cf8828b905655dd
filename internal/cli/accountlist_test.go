package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestAccountsListFiltersAndReadsEveryPage: accounts list follows the
// service's pages (more accounts than one page holds) and passes the
// filters and the order on.
func TestAccountsListFiltersAndReadsEveryPage(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	ep := u.id("endpoints", "create", "--host", "imap.example", "--tls-mode", "ssl")
	task := u.id("tasks", "create", "--source", ep, "--destination", u.id("endpoints", "create", "--host", "imap.new.example"))
	var csv strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&csv, "user%04d,pw\n", i)
	}
	u.stdin = csv.String()
	u.ok("accounts", "import", task, "-")
	if _, err := svc.Pool.Exec(context.Background(),
		`UPDATE accounts SET state = 'failed' WHERE source_login IN ('user0007', 'user1500', 'user2499')`); err != nil {
		t.Fatal(err)
	}

	var all []api.Account
	decodeJSON(t, u.ok("accounts", "list", task, "--output", "json"), &all)
	if len(all) != 2500 || all[0].SourceLogin != "user0000" || all[2499].SourceLogin != "user2499" {
		t.Fatalf("listed %d accounts, want all 2500 in id order", len(all))
	}
	out := u.ok("accounts", "list", task, "--state", "failed,canceled", "--sort", "-login")
	var logins []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		logins = append(logins, strings.Fields(line)[1])
	}
	if strings.Join(logins, " ") != "user2499 user1500 user0007" {
		t.Errorf("failed accounts, by login backwards: %q\n%s", logins, out)
	}
	var some []api.Account
	decodeJSON(t, u.ok("accounts", "list", task, "--search", "USER24", "--limit", "5", "--output", "json"), &some)
	if len(some) != 5 || some[0].SourceLogin != "user2400" || some[4].SourceLogin != "user2404" {
		t.Errorf("--search USER24 --limit 5: %d accounts, want user2400 to user2404", len(some))
	}
	if _, err := svc.Pool.Exec(context.Background(),
		`UPDATE accounts SET source_test_ok = false, source_test_error = 'authentication failed', destination_test_ok = true
		 WHERE source_login IN ('user0042', 'user2042')`); err != nil {
		t.Fatal(err)
	}
	var refused []api.Account
	decodeJSON(t, u.ok("accounts", "list", task, "--login-test", "failed", "--output", "json"), &refused)
	if len(refused) != 2 || refused[0].SourceLogin != "user0042" || refused[1].SourceLogin != "user2042" {
		t.Errorf("--login-test failed: %d accounts, want user0042 and user2042", len(refused))
	}
	if r := u.run("accounts", "list", task, "--sort", "size"); r.code != 1 || !strings.Contains(r.stderr, "sort must be one of") {
		t.Errorf("--sort size: exit %d, %q", r.code, r.stderr)
	}

	// Runs and tests take the same filters.
	if r := u.run("tasks", "test", task, "--login-test", "passed"); r.code != 1 || !strings.Contains(r.stderr, "no account of the task matches") {
		t.Errorf("tasks test --login-test passed with no test yet: exit %d, %q", r.code, r.stderr)
	}
	u.ok("tasks", "run", task, "--state", "failed", "--search", "user0007")
	var queued []string
	rows, err := svc.Pool.Query(context.Background(), `SELECT source_login FROM accounts WHERE run_generation > 0`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var login string
		rows.Scan(&login) //nolint:errcheck // rows.Err says
		queued = append(queued, login)
	}
	if rows.Err() != nil || strings.Join(queued, " ") != "user0007" {
		t.Errorf("tasks run --state failed --search user0007 started %q (%v)", queued, rows.Err())
	}
}

// TestEndpointsCheckSaysWhatToDo: a closed port exits 1 with the problem
// and the advice.
func TestEndpointsCheckSaysWhatToDo(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	ep := u.id("endpoints", "create", "--host", "127.0.0.1", "--port", "1", "--tls-mode", "ssl")
	r := u.run("endpoints", "check", ep)
	if r.code != 1 || !strings.Contains(r.stdout, "Problem:") || !strings.Contains(r.stdout, "Nothing listens on 127.0.0.1:1 (connection refused).") ||
		!strings.Contains(r.stdout, "IMAP listens on 993 with ssl") || !strings.Contains(r.stderr, "does not work as configured") {
		t.Errorf("check of a closed port: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
