package cli_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// Passwords distinctive enough to find in any output that leaked them.
const (
	alicePassword    = "alice-Secret-7f3a"
	aliceNewPassword = "alice-New-Secret-91c2"
	bobPassword      = "bob-Secret-0d4e"
	bobNewPassword   = "bob-New-Secret-55ab"
)

// TestScriptedMigration goes from an empty service to a report with the
// CLI only, between two real Dovecots: endpoints, a task, accounts from
// CSV, a login test, a followed run, the report; the destination ends
// exact and no password is ever printed.
func TestScriptedMigration(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": alicePassword, "bob": bobPassword}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": aliceNewPassword, "bob": bobNewPassword}})
	for i, login := range []string{"alice", "bob"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 40}))
	}
	u := newUser(t, svc)
	var printed strings.Builder // every output, searched for passwords at the end
	defer func() { checkNoPassword(t, printed.String()) }()

	src := u.id("endpoints", "create", "--host", old.Host, "--port", strconv.Itoa(old.Port), "--tls-mode", "plain", "--role-label", "old provider")
	dst := u.id("endpoints", "create", "--host", neu.Host, "--port", strconv.Itoa(neu.TLSPort), "--tls-mode", "ssl", "--tls-skip-verify")
	var endpoints []api.Endpoint
	decodeJSON(t, u.ok("endpoints", "list", "--output", "json"), &endpoints)
	if len(endpoints) != 2 || endpoints[0].RoleLabel != "old provider" || endpoints[1].TlsMode != api.TLSModeSsl || !endpoints[1].TlsSkipVerify {
		t.Fatalf("endpoints: %+v", endpoints)
	}
	if table := u.ok("endpoints", "list"); !strings.Contains(table, "old provider") || !strings.HasPrefix(table, "ID ") {
		t.Errorf("endpoints table:\n%s", table)
	}

	task := u.id("tasks", "create", "--name", "acme cut-over", "--source", src, "--destination", dst)
	u.ok("tasks", "update", task, "--parallel-accounts", "1")
	var created api.Task
	decodeJSON(t, u.ok("tasks", "get", task, "--output", "json"), &created)
	if created.Name != "acme cut-over" || created.Options.ParallelAccounts != 1 || strconv.FormatInt(created.SourceEndpointId, 10) != src {
		t.Errorf("task after update: %+v", created)
	}
	csvFile := filepath.Join(t.TempDir(), "accounts.csv")
	os.WriteFile(csvFile, []byte("source_login;source_password;destination_login;destination_password\n"+
		"alice;"+alicePassword+";alice;"+aliceNewPassword+"\nbob;"+bobPassword+";bob;"+bobNewPassword+"\n"), 0o600)
	if out := u.ok("accounts", "import", task, csvFile); !strings.Contains(out, "2 accounts added to task "+task) {
		t.Errorf("import said %q", out)
	}

	out := u.ok("tasks", "test", task, "--follow")
	printed.WriteString(out)
	if strings.Count(out, "test.ok") != 4 || !strings.Contains(out, "logins of 2 of 2 accounts work on both sides") {
		t.Errorf("tasks test --follow:\n%s", out)
	}

	out = u.ok("tasks", "run", task, "--follow")
	printed.WriteString(out)
	for _, want := range []string{"account.started", "account.done", "run.finished", "task " + task + " completed in "} {
		if !strings.Contains(out, want) {
			t.Errorf("tasks run --follow does not say %q:\n%s", want, out)
		}
	}
	for _, login := range []string{"alice", "bob"} {
		if diff := imaptest.Diff(old.Read(t, login), neu.Read(t, login)); len(diff) > 0 {
			t.Fatalf("%s differs after the run:\n%s", login, strings.Join(diff, "\n"))
		}
	}

	var events []api.Event
	decodeJSON(t, u.ok("tasks", "events", task, "--output", "json"), &events)
	if len(events) < 8 || events[len(events)-1].Kind != "run.finished" { // 4 test.ok, 2 started, 2 done, finished
		t.Errorf("tasks events: %+v", events)
	}
	if limited := u.ok("tasks", "events", task, "--limit", "2"); strings.Count(limited, "\n") != 3 || !strings.Contains(limited, "test.ok") {
		t.Errorf("tasks events --limit 2:\n%s", limited)
	}

	var got api.Task
	decodeJSON(t, u.ok("tasks", "get", task, "--output", "json"), &got)
	if got.State != api.TaskStateCompleted || got.Accounts.Completed != 2 || got.Totals.MessagesCopied == 0 {
		t.Errorf("task after the run: %+v", got)
	}
	var accounts []api.Account
	listed := u.ok("accounts", "list", task, "--output", "json")
	printed.WriteString(listed + u.ok("accounts", "list", task))
	decodeJSON(t, listed, &accounts)
	var copied int64
	for _, a := range accounts {
		copied += a.Progress.MessagesCopied
	}
	if len(accounts) != 2 || copied != got.Totals.MessagesCopied {
		t.Errorf("accounts %+v, task copied %d", accounts, got.Totals.MessagesCopied)
	}
	passes := u.ok("tasks", "passes", task)
	if lines := strings.Split(strings.TrimSpace(passes), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "1 ") ||
		!strings.Contains(lines[1], "completed") || !strings.Contains(lines[1], fmt.Sprintf(" %d ", copied)) {
		t.Errorf("tasks passes after one pass:\n%s", passes)
	}

	// One account's passes and folders.
	first := strconv.FormatInt(accounts[0].Id, 10)
	accountPasses := u.ok("accounts", "passes", task, first)
	if !strings.Contains(accountPasses, "PASS") || !strings.Contains(accountPasses, "\n1 ") || !strings.Contains(accountPasses, "completed") {
		t.Errorf("accounts passes:\n%s", accountPasses)
	}
	if byOldName := u.ok("accounts", "runs", task, first); byOldName != accountPasses {
		t.Errorf("accounts runs, the old name, printed\n%s\nwhere accounts passes printed\n%s", byOldName, accountPasses)
	}
	if folders := u.ok("accounts", "folders", task, first); !strings.Contains(folders, "SOURCE FOLDER") || !strings.Contains(folders, "INBOX") {
		t.Errorf("accounts folders:\n%s", folders)
	}
	printed.WriteString(u.ok("accounts", "folders", task, first))

	reportFile := filepath.Join(t.TempDir(), "report.csv")
	u.ok("tasks", "report", task, "-o", reportFile)
	report, _ := os.ReadFile(reportFile)
	printed.Write(report)
	rows, err := csv.NewReader(strings.NewReader(string(report))).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][0] != "account_id" || rows[1][3] != "completed" || rows[2][3] != "completed" {
		t.Errorf("report (%v):\n%s", err, report)
	}
	if stdoutReport := u.ok("tasks", "report", task); stdoutReport != string(report) {
		t.Errorf("report on stdout differs from the file:\n%s", stdoutReport)
	}

	// A verifying pass looks at both servers of every account.
	u.ok("tasks", "run", task, "--verify", "--follow")
	var passList []api.Pass
	decodeJSON(t, u.ok("tasks", "passes", task, "--output", "json"), &passList)
	if len(passList) != 2 || passList[1].StartedBy != api.PassStarterVerify || passList[1].AccountsCompleted != 2 {
		t.Errorf("tasks passes after tasks run --verify: %+v", passList)
	}
}

func decodeJSON(t *testing.T, text string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, text)
	}
}

func checkNoPassword(t *testing.T, output string) {
	t.Helper()
	for _, pw := range []string{alicePassword, aliceNewPassword, bobPassword, bobNewPassword} {
		if strings.Contains(output, pw) {
			t.Errorf("a password was printed: %q", pw)
		}
	}
}

// TestPlanFromTheCommandLine: tasks plan reads both servers, prints per
// account what is to copy and the problems in words, exits 1 when one
// blocks, and copies nothing; --show prints the plan again, --folders the
// folder plan.
func TestPlanFromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": alicePassword, "bob": bobPassword}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": alicePassword, "bob": bobPassword},
		QuotaBytes: 1 << 20})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 5}))
	old.Load(t, "bob", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 2, Messages: 200})) // more than 1 MB
	u := newUser(t, svc)
	src := u.id("endpoints", "create", "--host", old.Host, "--port", strconv.Itoa(old.Port), "--tls-mode", "plain")
	dst := u.id("endpoints", "create", "--host", neu.Host, "--port", strconv.Itoa(neu.Port), "--tls-mode", "plain")
	task := u.id("tasks", "create", "--name", "plan", "--source", src, "--destination", dst)
	csvFile := filepath.Join(t.TempDir(), "accounts.csv")
	if err := os.WriteFile(csvFile, []byte("alice,"+alicePassword+"\nbob,"+bobPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.ok("accounts", "import", task, csvFile)

	r := u.run("tasks", "plan", task)
	if r.code != 1 || strings.TrimSpace(r.stderr) != "mailmigrate: 1 account is blocked" {
		t.Errorf("plan: exit %d, stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "2 planned, 0 failed, 1 blocked") || !strings.Contains(r.stdout, "bob: BLOCKING quota: the destination's quota leaves ") ||
		!strings.Contains(r.stdout, "MB TO COPY") {
		t.Errorf("plan output:\n%s", r.stdout)
	}
	if r := u.run("tasks", "plan", task, "--show", "--folders"); !strings.Contains(r.stdout, "SOURCE") || !strings.Contains(r.stdout, "INBOX") {
		t.Errorf("--show --folders:\n%s", r.stdout)
	}
	checkNoPassword(t, r.stdout+r.stderr)
	// --problems lists bob alone; in JSON, each account in brief.
	var listed struct {
		api.TaskPlan
		Plans []api.AccountPlanRecord `json:"plans"`
	}
	decodeJSON(t, u.run("tasks", "plan", task, "--show", "--problems", "--output", "json").stdout, &listed)
	if len(listed.Accounts) != 1 || listed.Accounts[0].SourceLogin != "bob" || listed.Listed != 1 || listed.Done != 2 || listed.Plans != nil {
		t.Fatalf("--problems: %+v", listed)
	}
	// One account's plan, whole: exit 1 for bob, blocked.
	bob := strconv.FormatInt(listed.Accounts[0].AccountId, 10)
	r = u.run("accounts", "plan", task, bob)
	if r.code != 1 || strings.TrimSpace(r.stderr) != "mailmigrate: the account is blocked" ||
		!strings.Contains(r.stdout, "INBOX") || !strings.Contains(r.stdout, "MB TO COPY") || !strings.Contains(r.stdout, "bob: BLOCKING quota:") {
		t.Errorf("accounts plan of bob: exit %d, %s\n%s", r.code, r.stderr, r.stdout)
	}
	if n := len(neu.Read(t, "alice").Messages) + len(neu.Read(t, "bob").Messages); n != 0 {
		t.Errorf("the plan copied %d messages", n)
	}
}
