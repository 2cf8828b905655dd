package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// testTaskRun creates a task through the form, uploads a CSV file with a
// bad line (named, nothing stored) and then a good one, runs the task
// against two real Dovecots and sees the progress and the finished state
// arrive without a reload; then deletes an account.
func testTaskRun(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a", "bob": "b"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "a2", "bob": "b2"}})
	for i, login := range []string{"alice", "bob"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 40}))
	}
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})

	tb := openTab(t, browser, s)
	tb.open("#/tasks")
	tb.waitText("main", "No task yet")
	tb.fill(map[string]string{
		"#task-form [name=name]":                    "acme cut-over",
		"#task-form [name=source_endpoint_id]":      fmt.Sprint(src),
		"#task-form [name=destination_endpoint_id]": fmt.Sprint(dst),
		"#task-form [name=exclude_folders]":         "^Nothing here$",
		"#task-form [name=parallel_accounts]":       "1",
	})
	tb.click("#task-form button.primary")
	tb.waitText("#task-summary h1", "acme cut-over")
	tb.waitText("#task-summary", "From old ("+old.Addr()+") to new ("+neu.Addr()+")")
	taskID := evaluate[int64](tb, `Number(location.hash.split('/')[2])`)
	task, err := s.Client.GetTaskWithResponse(context.Background(), taskID)
	if err != nil || task.JSON200 == nil {
		t.Fatalf("GET the created task: %v", err)
	}
	if opts := task.JSON200.Options; opts.ParallelAccounts != 1 || len(opts.ExcludeFolders) != 1 || opts.ExcludeFolders[0] != "^Nothing here$" {
		t.Errorf("task options from the form: %+v", opts)
	}

	// A file with a bad line: the page names it, and nothing is stored.
	tb.upload("#import-form [name=file]", "accounts.csv", "alice,a,alice,a2\n,orphan-password\nbob,b,bob,b2\n")
	tb.click("#import-form button.primary")
	tb.waitText("#import-form .notice.error", "Nothing was imported: accounts.csv has 1 bad line.")
	tb.waitText("#import-form .notice.error li", "line 2: ")
	tb.screenshot("task-csv-error")
	if got := tb.text("#accounts"); !strings.Contains(got, "No account yet") {
		t.Errorf("accounts after a refused import: %q", got)
	}
	tb.upload("#import-form [name=file]", "accounts.csv", "alice,a,alice,a2\nbob,b,bob,b2\n")
	tb.click("#import-form button.primary")
	tb.waitText("#import-form .notice.ok", "2 accounts imported from accounts.csv.")
	tb.waitText("#account-list", "bob")

	// Run: the page must follow it on its own, so a reload would lose this mark.
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__samePage = true`))
	tb.click(`#task-summary button[data-action="run"]`)
	tb.waitText("#task-summary .notice, main .notice.ok", "Pass started")
	tb.waitText("#task-summary h1 .badge", "completed")
	tb.waitJS(`document.querySelectorAll('#account-list tr[data-state="completed"]').length === 2`, "both accounts completed")
	tb.waitText("#event-log", "pass finished: completed (2 accounts: 2 completed)")
	if !evaluate[bool](tb, `window.__samePage === true`) {
		t.Error("the page reloaded during the run")
	}
	accounts, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, nil)
	if err != nil || accounts.JSON200 == nil {
		t.Fatalf("list accounts: %v", err)
	}
	for _, a := range *accounts.JSON200 {
		p := a.Progress
		row := fmt.Sprintf(`#account-list tr[data-id="%d"]`, a.Id)
		got := tb.text(row)
		for _, want := range []string{
			fmt.Sprintf("%d of %d messages copied", p.MessagesCopied, p.SourceMessages),
			fmt.Sprintf("%d/%d folders", p.FoldersDone, p.FoldersTotal),
		} {
			if p.MessagesCopied == 0 || !strings.Contains(got, want) {
				t.Errorf("row of %s says %q, want %q (and messages copied)", a.SourceLogin, got, want)
			}
		}
		bar := evaluate[[]float64](tb, fmt.Sprintf(`[document.querySelector('%s progress').value, document.querySelector('%s progress').max]`, row, row))
		if bar[0] != bar[1] || bar[1] != float64(p.SourceMessages) {
			t.Errorf("progress bar of %s at %v of %v, want full at the source's %d messages", a.SourceLogin, bar[0], bar[1], p.SourceMessages)
		}
	}
	for _, want := range []string{"alice: migration started", "bob: migration started"} {
		tb.waitText("#event-log", want)
	}
	if href := evaluate[string](tb, `document.querySelector('#report-link').getAttribute('href')`); href != fmt.Sprintf("/api/v1/tasks/%d/report.csv", taskID) {
		t.Errorf("report link %q", href)
	}
	tb.screenshot("task-completed")

	// A second pass finds nothing new, and the first keeps its figures.
	tb.waitText(`#pass-list tr[data-pass="1"]`, "2: 2 completed")
	firstPass := tb.text(`#pass-list tr[data-pass="1"]`)
	tb.click(`#task-summary button[data-action="run"]`)
	tb.waitText(`#pass-list tr[data-pass="2"]`, "completed0 messages")
	tb.waitText(`#pass-list tr[data-pass="all"]`, "All")
	if again := tb.text(`#pass-list tr[data-pass="1"]`); again != firstPass || strings.Contains(firstPass, "completed0 messages") {
		t.Errorf("pass 1 reads %q after pass 2, was %q", again, firstPass)
	}
	tb.screenshot("task-passes")
	tb.phoneWidth()
	tb.screenshot("task-completed-phone")

	// Delete an account, once confirmed, when the run is over and its
	// button is enabled again.
	bob := (*accounts.JSON200)[1]
	tb.waitText("#task-summary h1 .badge", "completed")
	tb.waitJS(fmt.Sprintf(`document.querySelector('#account-list tr[data-id="%d"] button[data-action="delete"]')?.disabled === false`, bob.Id),
		"bob's Delete to be enabled once the run is over")
	tb.click(fmt.Sprintf(`#account-list tr[data-id="%d"] button[data-action="delete"]`, bob.Id))
	tb.confirm("Delete account bob from this task?", true)
	tb.waitText("main .notice.ok", "Account bob deleted.")
	tb.waitJS(fmt.Sprintf(`document.querySelector('#account-list tr[data-id="%d"]') === null`, bob.Id), "bob's row to go")

	tb.open("#/tasks")
	tb.waitText("#task-list", "acme cut-over")
	tb.waitText("#task-list", "1 of 1")
	tb.screenshot("tasks")
}

// upload puts a file with that name and content in a file input.
func (tb *tab) upload(sel, name, content string) {
	tb.t.Helper()
	path := filepath.Join(tb.t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.t.Fatal(err)
	}
	tb.run(chromedp.SetUploadFiles(chromedp.CSS(sel), []string{path}))
}

// testTaskSettings: a task's name, servers and options, set when it was
// created, are shown on its page and changed there; a change while the
// task runs is refused in words and keeps what was typed.
func testTaskSettings(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "imap.old.example", TlsMode: api.TLSModeSsl})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	taskID := s.createTask(t, "acme", src, dst)
	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.click("#task-settings summary")
	if got := evaluate[string](tb, `document.querySelector('#task-settings-form [name=name]').value`); got != "acme" {
		t.Errorf("the settings show the name %q", got)
	}
	tb.fill(map[string]string{
		"#task-settings-form [name=name]":              "acme, week-end",
		"#task-settings-form [name=parallel_accounts]": "8",
		"#task-settings-form [name=exclude_folders]":   "^Trash$\n^Junk$",
		"#task-settings-form [name=folder_map]":        "Sent Items = Sent",
	})
	tb.click("#task-settings-form button.primary")
	tb.waitText("#task-settings .notice.ok", "Settings saved")
	tb.waitText("#task-summary h1", "acme, week-end")
	got, err := s.Client.GetTaskWithResponse(context.Background(), taskID)
	if err != nil || got.JSON200 == nil {
		t.Fatalf("get the task: %v", err)
	}
	o := got.JSON200.Options
	if o.ParallelAccounts != 8 || strings.Join(o.ExcludeFolders, ",") != "^Trash$,^Junk$" || o.FolderMap["Sent Items"] != "Sent" {
		t.Errorf("options after saving: %+v", o)
	}
	// While it runs, a change is refused in words.
	if _, err := s.Pool.Exec(context.Background(), `UPDATE tasks SET state = 'running' WHERE id = $1`, taskID); err != nil {
		t.Fatal(err)
	}
	tb.fill(map[string]string{"#task-settings-form [name=parallel_accounts]": "2"})
	tb.click("#task-settings-form button.primary")
	tb.waitText("#task-settings .notice.error", "Not saved: task is running")
	if got := evaluate[string](tb, `document.querySelector('#task-settings-form [name=parallel_accounts]').value`); got != "2" {
		t.Errorf("the refused change lost what was typed: %q", got)
	}
}
