package cli_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestRunWithAWrongPasswordExitsNonZero: one account's password is wrong,
// so the run, followed on a terminal, ends completed_with_errors; the CLI
// names the account and the server's error, and exits 1. The login test said so
// first, with exit 1 too.
func TestRunWithAWrongPasswordExitsNonZero(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a", "bob": "b", "carol": "c"}})
	u := newUser(t, svc)
	ep := u.id("endpoints", "create", "--host", d.Host, "--port", strconv.Itoa(d.Port), "--tls-mode", "plain")
	dst := u.id("endpoints", "create", "--host", d.Host, "--port", strconv.Itoa(d.Port), "--tls-mode", "plain")
	task := u.id("tasks", "create", "--source", ep, "--destination", dst)
	u.stdin = "alice,a,carol,c\nbob,wrong,carol,c\n"
	u.ok("accounts", "import", task, "-")

	tested := u.run("tasks", "test", task, "--follow")
	if tested.code != 1 || !strings.Contains(tested.stdout, "test.failed") ||
		!strings.Contains(tested.stderr, "the login test failed for 1 of 2 accounts") {
		t.Errorf("tasks test --follow: exit %d\nstdout:\n%s\nstderr:\n%s", tested.code, tested.stdout, tested.stderr)
	}

	u.terminal = true
	ran := u.run("tasks", "run", task, "--follow")
	u.terminal = false
	if ran.code != 1 {
		t.Fatalf("tasks run --follow: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", ran.code, ran.stdout, ran.stderr)
	}
	if !strings.Contains(ran.stderr, "task "+task+" ended completed_with_errors: 1 of 2 accounts not completed") {
		t.Errorf("stderr: %s", ran.stderr)
	}
	// On a terminal the figures are redrawn in place (ESC[nF: up n lines).
	if !regexpMatch(`\x1b\[\dF\x1b\[J(.*\n)?task `+task+` running: `, ran.stdout) {
		t.Errorf("no redrawn figures on a terminal: %q", ran.stdout)
	}
	// The summary lists bob, with the server's words.
	if !strings.Contains(ran.stdout, "account.failed") || !regexpMatch(`(?m)^2 +bob +failed .*authentication failed`, ran.stdout) {
		t.Errorf("stdout:\n%s", ran.stdout)
	}

	// The same, as JSON for a script.
	watched := u.run("tasks", "watch", task, "--output", "json")
	var summary struct {
		Task     api.Task      `json:"task"`
		Accounts []api.Account `json:"accounts"`
	}
	decodeJSON(t, watched.stdout, &summary)
	if watched.code != 1 || summary.Task.State != api.TaskStateCompletedWithErrors || len(summary.Accounts) != 2 ||
		summary.Accounts[1].State != api.AccountStateFailed {
		t.Errorf("tasks watch --output json: exit %d, %+v", watched.code, summary)
	}

	// With bob's password fixed, running bob alone completes the task.
	bob := strconv.FormatInt(summary.Accounts[1].Id, 10)
	u.stdin = "b\n"
	u.ok("accounts", "update", task, bob, "--source-password-file", "-")
	retried := u.run("accounts", "run", task, bob, "--follow")
	if retried.code != 0 || !strings.Contains(retried.stdout, "account.done") {
		t.Errorf("accounts run --follow: exit %d\nstdout:\n%s\nstderr:\n%s", retried.code, retried.stdout, retried.stderr)
	}
	if again := u.run("accounts", "run", task, "999"); again.code != 1 || strings.TrimSpace(again.stderr) != "mailmigrate: not found" {
		t.Errorf("accounts run of a missing account: exit %d, stderr %q", again.code, again.stderr)
	}
}

// TestErrorsAndUsage: the server's plain-text errors reach stderr with
// exit 1; a wrong command line is exit 2 with the usage.
func TestErrorsAndUsage(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	ep := u.id("endpoints", "create", "--host", "imap.example", "--tls-mode", "ssl")
	task := u.id("tasks", "create", "--source", ep, "--destination", u.id("endpoints", "create", "--host", "imap.new.example"))
	tests := []struct {
		args       []string
		wantCode   int
		wantStderr string
	}{
		{[]string{"tasks", "get", "999"}, 1, "mailmigrate: not found\n"},
		{[]string{"accounts", "list", "999"}, 1, "mailmigrate: not found\n"},
		{[]string{"tasks", "run", "999", "--follow"}, 1, "mailmigrate: not found\n"},
		{[]string{"endpoints", "create", "--host", "x", "--tls-mode", "tls"}, 1, "mailmigrate: tls_mode must be ssl|starttls|plain\n"},
		{[]string{"tasks", "create", "--source", "5", "--destination", "6"}, 1, "mailmigrate: "},
		{[]string{"tasks", "cancel", task}, 1, "mailmigrate: task is not running\n"},
		{[]string{"tasks", "run", task}, 1, "mailmigrate: task has no accounts\n"},
		{[]string{"endpoints", "delete", ep}, 1, "mailmigrate: endpoint is used by 1 task\n"},
		{[]string{"tasks", "get"}, 2, "want ID, got 0 arguments"},
		{[]string{"tasks", "get", "seven"}, 2, `ID "seven": want a positive integer`},
		{[]string{"tasks", "get", "1", "2"}, 2, "want ID, got 2 arguments"},
		{[]string{"tasks", "list", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"tasks", "frobnicate"}, 2, `unknown command "tasks frobnicate"`},
		{[]string{"tasks", "list", "--output", "yaml"}, 2, `--output "yaml": want table or json`},
		{[]string{"tasks", "list", "--colour"}, 2, "flag provided but not defined: -colour"},
		{[]string{"tasks", "create", "--name", "x"}, 2, "--source and --destination are required"},
		{[]string{"accounts", "create", "1", "--source-password-file", "-"}, 2, "want --source-login"},
		{[]string{"tasks"}, 2, "Usage: mailmigrate tasks COMMAND"},
	}
	for _, tt := range tests {
		got := u.run(tt.args...)
		if got.code != tt.wantCode || !strings.Contains(got.stderr, tt.wantStderr) {
			t.Errorf("mailmigrate %s: exit %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), got.code, got.stderr, tt.wantCode, tt.wantStderr)
		}
	}
	unreachable := &user{t: t, env: map[string]string{"MAILMIGRATE_URL": "http://127.0.0.1:1"}}
	if got := unreachable.run("endpoints", "list"); got.code != 1 || !strings.Contains(got.stderr, "connection refused") {
		t.Errorf("no service: exit %d, stderr %q", got.code, got.stderr)
	}
}

// TestAccountPasswordsAreReadNotPrinted adds and changes an account with
// passwords from stdin and the environment; none is ever printed.
func TestAccountPasswordsAreReadNotPrinted(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": alicePassword, "bob": bobPassword}})
	u := newUser(t, svc)
	ep := u.id("endpoints", "create", "--host", d.Host, "--port", strconv.Itoa(d.Port), "--tls-mode", "plain")
	dst := u.id("endpoints", "create", "--host", d.Host, "--port", strconv.Itoa(d.Port), "--tls-mode", "plain")
	task := u.id("tasks", "create", "--source", ep, "--destination", dst)
	u.stdin = alicePassword + "\n"
	u.env["MAILMIGRATE_DESTINATION_PASSWORD"] = bobPassword
	account := u.id("accounts", "create", task, "--source-login", "alice", "--source-password-file", "-", "--destination-login", "bob")

	var printed strings.Builder
	out := u.run("tasks", "test", task, "--follow")
	printed.WriteString(out.stdout + out.stderr)
	if out.code != 0 {
		t.Fatalf("the passwords from stdin and the environment do not work: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}
	for _, format := range []string{"table", "json"} {
		printed.WriteString(u.ok("accounts", "get", task, account, "--output", format))
		printed.WriteString(u.ok("accounts", "list", task, "--output", format))
	}

	// An update without passwords keeps them and changes only the login given.
	delete(u.env, "MAILMIGRATE_DESTINATION_PASSWORD")
	u.ok("accounts", "update", task, account, "--destination-login", "alice")
	var a api.Account
	decodeJSON(t, u.ok("accounts", "get", task, account, "--output", "json"), &a)
	if a.SourceLogin != "alice" || a.DestinationLogin != "alice" {
		t.Errorf("after update: %+v", a)
	}
	if out := u.run("tasks", "test", task, "--follow"); out.code != 1 || !strings.Contains(out.stdout, "failed: authentication failed") {
		t.Errorf("bob's password kept for alice's login should fail the test: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}
	checkNoPassword(t, printed.String())
}
