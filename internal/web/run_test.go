package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// testRetryAccount runs a task whose account alice has a wrong source
// password: her row says why she failed; her password is fixed through
// the edit form, Retry runs her alone, and the row and the task's state
// follow without a reload.
func testRetryAccount(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a", "bob": "b"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "a2", "bob": "b2"}})
	for i, login := range []string{"alice", "bob"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1)}))
	}
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "retry me", src, dst)
	alice := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "alice", SourcePassword: "wrong", DestinationPassword: "a2"})
	bob := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "bob", SourcePassword: "b", DestinationPassword: "b2"})
	aliceRow := fmt.Sprintf(`#account-list tr[data-id="%d"]`, alice)

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#stream-state", "live")
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__samePage = true`))
	tb.click(`#task-summary button[data-action="run"]`)
	tb.waitJS(`document.querySelector(`+quote(aliceRow)+`)?.dataset.state === "failed"`, "alice to fail")
	tb.waitText(aliceRow+" .error-text", "authentication failed")
	tb.waitText("#task-summary h1 .badge", "completed with errors")
	tb.waitText(`#event-log li[data-kind="account.failed"]`, "alice")
	tb.waitText(aliceRow+` .badge.needs-credentials[data-login-refused="source"]`, "needs credentials")
	tb.screenshot("task-account-failed")

	// A retry with the same wrong password says that it failed again,
	// instead of leaving "Retrying" on screen.
	tb.click(aliceRow + ` button[data-action="retry"]`)
	tb.waitText("main .notice.error", "alice: retried, failed: source alice at ")
	tb.waitText("main .notice.error", "What to do: Check the source login alice and its password")
	tb.waitJS(`document.querySelectorAll('#event-log li[data-kind="run.finished"]').length === 2`, "the retry's run to finish")
	tb.waitJS(fmt.Sprintf(`document.querySelector('#account-list tr[data-id="%d"] button[data-action="edit"]')?.disabled === false`, bob),
		"the rows' buttons to be enabled once the task is not running")

	// The edit form: logins filled in, passwords empty; Cancel goes back
	// to adding one; a new source password alone is changed.
	tb.click(fmt.Sprintf(`#account-list tr[data-id="%d"] button[data-action="edit"]`, bob))
	tb.waitText("#account-form h2", "Edit account bob")
	tb.click(`#account-form button[data-action="cancel-edit"]`)
	tb.waitText("#account-form h2", "Add an account")
	if got := evaluate[string](tb, `document.querySelector('#account-form [name=source_login]').value`); got != "" {
		t.Errorf("the add form after Cancel holds %q", got)
	}
	tb.click(aliceRow + ` button[data-action="edit"]`)
	tb.waitText("#account-form h2", "Edit account alice")
	// The form opens right below alice's row: on a list of thousands the
	// person keeps their place.
	if !evaluate[bool](tb, `document.querySelector(`+quote(aliceRow)+`).nextElementSibling?.contains(document.querySelector('#account-form')) === true`) {
		t.Error("the edit form is not right below alice's row")
	}
	if got := evaluate[[]string](tb, `['source_login', 'destination_login', 'source_password', 'destination_password'].map((n) => document.querySelector('#account-form [name=' + n + ']').value)`); fmt.Sprint(got) != "[alice alice  ]" {
		t.Errorf("edit form holds %q", got)
	}
	if evaluate[bool](tb, `document.querySelector('#destination-same').checked`) {
		t.Error("alice's destination password of her own shows as the same as the source")
	}
	if focused := evaluate[string](tb, `document.activeElement.name`); focused != "source_password" {
		t.Errorf("the focus is on %q, want the source password", focused)
	}
	tb.screenshot("task-account-edit")
	tb.fill(map[string]string{"#account-form [name=source_password]": "a"})
	tb.click("#account-form button.primary")
	tb.waitText("#account-form .notice.ok", "Account alice saved.")
	tb.waitText("#account-form h2", "Add an account")
	// Saved: the form goes home, and the focus back to alice's row.
	tb.waitJS(`document.activeElement?.closest('tr')?.dataset.id === `+quote(fmt.Sprint(alice))+
		` && !document.querySelector('#account-list').contains(document.querySelector('#account-form'))`, "the focus back on alice's row, the form home")
	tb.waitJS(`document.querySelector(`+quote(aliceRow+" .badge.needs-credentials")+`) === null`, "alice's mended password to clear 'needs credentials'")

	tb.click(aliceRow + ` button[data-action="retry"]`)
	tb.waitText("main .notice.ok", "Retrying alice…")
	tb.waitJS(`document.querySelector(`+quote(aliceRow)+`)?.dataset.state === "completed"`, "alice to complete")
	tb.waitText("main .notice.ok", "alice: retried and completed.")
	tb.waitText("#task-summary h1 .badge", "completed")
	tb.waitText(aliceRow, " messages copied")
	if !evaluate[bool](tb, `window.__samePage === true`) {
		t.Error("the page reloaded")
	}
	got, err := s.Client.GetAccountWithResponse(context.Background(), taskID, alice)
	if err != nil || got.JSON200 == nil {
		t.Fatalf("get alice: %v", err)
	}
	if p := got.JSON200.Progress; p.MessagesCopied == 0 || got.JSON200.LastError != "" {
		t.Errorf("alice after the retry: %+v, last error %q", p, got.JSON200.LastError)
	}
	tb.screenshot("task-account-retried")
}

// testCancelRun runs three slow accounts one at a time and cancels the
// run from the task page; a second tab on the tasks list follows the run
// started elsewhere, then its cancel, without a reload and without losing
// the keyboard focus.
func testCancelRun(t *testing.T, browser context.Context) {
	s := startSiteWith(t, "", servicetest.Options{Workers: worker.Options{LeaseRenewal: 300 * time.Millisecond}})
	users := map[string]string{"alice": "a", "bob": "b", "carol": "c"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
	for i, login := range []string{"alice", "bob", "carol"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1)}))
	}
	slowHost, slowPort := imaptest.SlowProxy(t, old.Addr(), 50_000)
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old (slow)", Host: slowHost, Port: slowPort, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	created, err := s.Client.CreateTaskWithResponse(context.Background(), api.TaskInput{Name: "slow one", SourceEndpointId: src,
		DestinationEndpointId: dst, Options: &api.TaskOptions{ParallelAccounts: 1}})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create task: %v", err)
	}
	taskID := created.JSON201.Id
	for _, login := range []string{"alice", "bob", "carol"} {
		s.createAccount(t, taskID, api.AccountInput{SourceLogin: login, SourcePassword: users[login]})
	}

	list := openTab(t, browser, s)
	list.open("#/tasks")
	list.waitText("#stream-state", "live")
	list.run(chromedp.Evaluate[chromedp.Void](`window.__samePage = true`))
	listRow := fmt.Sprintf(`#task-list tr[data-id="%d"]`, taskID)
	list.waitText(listRow, "idle")
	// A keyboard user on the task's link keeps the focus there while the
	// list redraws.
	list.run(chromedp.Focus(chromedp.CSS(listRow + " a")))

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#stream-state", "live")
	tb.click(`#task-summary button[data-action="run"]`)
	tb.waitJS(`document.querySelectorAll('#account-list tr[data-state="running"]').length === 1`, "one account running")
	tb.waitJS(`document.querySelectorAll('#account-list tr[data-state="queued"]').length === 2`, "two accounts queued")
	// The pass under way: its time and rate, and no guess at the time left
	// before an account has ended.
	tb.waitText("#pass-pace", " so far · ")
	if pace := tb.text("#pass-pace"); !strings.Contains(pace, "B/s") || !strings.HasSuffix(pace, "time left: known once an account ends") {
		t.Errorf("the pass's pace reads %q", pace)
	}
	list.waitText(listRow+" .badge", "running")
	if focused := evaluate[string](list, `document.activeElement.getAttribute('href') ?? document.activeElement.tagName`); focused != fmt.Sprintf("#/tasks/%d", taskID) {
		t.Errorf("after a live redraw the focus is on %q, want the task's link", focused)
	}
	list.screenshot("tasks-running")

	tb.waitJS(`!document.querySelector('#task-summary button[data-action="cancel"]').disabled`, "Cancel pass to be enabled")
	// Run had the focus and is disabled now: the focus moved on to the
	// next button, Test logins (a run does not block a test), not to the
	// top of the page.
	if focused := evaluate[string](tb, `document.activeElement.dataset.action ?? document.activeElement.tagName`); focused != "test" {
		t.Errorf("after Run the focus is on %q, want Test logins", focused)
	}
	tb.click(`#task-summary button[data-action="cancel"]`)
	tb.waitText("main .notice.ok", "Canceling the pass: slow one.")
	tb.waitText("#task-summary h1 .badge", "canceled")
	tb.waitJS(`document.querySelectorAll('#account-list tr[data-state="canceled"]').length === 3`, "the three accounts canceled")
	// A canceled run's bar is not full: no account ended its run.
	tb.waitText("#task-summary", "0 of 3 · 3 canceled")
	if value := evaluate[float64](tb, `document.querySelector('#task-summary progress').value`); value != 0 {
		t.Errorf("the task's bar stands at %v after a cancel", value)
	}
	tb.waitText(`#event-log li[data-kind="run.canceled"]`, "")
	if disabled := evaluate[bool](tb, `document.querySelector('#task-summary button[data-action="run"]').disabled`); disabled {
		t.Error("Run is still disabled after the cancel")
	}
	tb.screenshot("task-canceled")

	list.waitText(listRow+" .badge", "canceled")
	if !evaluate[bool](list, `window.__samePage === true`) {
		t.Error("the tasks list reloaded")
	}
	list.screenshot("tasks-canceled")
}

// testProgressEvents watches one slow account: its row's bar and figures
// (folders, messages copied of the total, megabytes, the folder being
// copied) move as
// account.progress and folder.done events come, many more times than the
// page asks the API for the accounts.
func testProgressEvents(t *testing.T, browser context.Context) {
	s := startSiteWith(t, "", servicetest.Options{Workers: worker.Options{ProgressEvents: 100 * time.Millisecond}})
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "a"}})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 7, Messages: 60, LargeMessages: 4, LargeSize: 250_000}))
	slowHost, slowPort := imaptest.SlowProxy(t, old.Addr(), 150_000)
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old (slow)", Host: slowHost, Port: slowPort, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "progress", src, dst)
	alice := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "alice", SourcePassword: "a"})
	row := fmt.Sprintf(`#account-list tr[data-id="%d"]`, alice)

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#stream-state", "live")
	// Every figure the row shows while alice runs, before the final one:
	// the messages done of the source's count, which is known from the
	// first figure on (the bar's end never moves), and the time left.
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__seen = new Set(); window.__bars = new Set(); window.__folders = new Set();
window.__totals = new Set(); window.__left = new Set();
new MutationObserver(() => {
  const row = document.querySelector(` + quote(row) + `);
  const m = row?.textContent.match(/(\d+)\/(\d+) folders · (\d+) of (\d+) messages done · ([\d.]+ [KM]?B) copied of ([\d.]+ [KM]?B)/);
  const bar = row?.querySelector('progress');
  if (row?.dataset.state === 'running' && m && m[3] !== '0' && bar.value < bar.max && bar.value === Number(m[3])) {
    window.__seen.add(m[0]);
    window.__bars.add(bar.value);
    window.__totals.add(m[4] + '/' + bar.max);
    const left = row.textContent.match(/about [^·]+ left/);
    if (left) window.__left.add(left[0]);
    const folder = row.querySelector('.progress-cell span').textContent.match(/ · copying (.+)$/);
    if (folder) window.__folders.add(folder[1]);
  }
}).observe(document.querySelector('#accounts'), { subtree: true, childList: true, characterData: true });`))
	accountsPath := fmt.Sprintf("/api/v1/tasks/%d/accounts", taskID)
	fetchesBefore := s.getCount(accountsPath)
	tb.click(`#task-summary button[data-action="run"]`)
	tb.waitJS(`window.__seen.size >= 3 && window.__bars.size >= 2`, "the row's figures and bar to move while running")
	tb.waitJS(`window.__left.size >= 1`, "the row to say the time left")
	tb.waitJS(`/\d+% of 64 messages, [\d.]+ MB · about .+ left/.test(document.querySelector('#pass-pace')?.textContent)`, "the pass to say how far it is and the time left")
	tb.waitJS(`document.querySelectorAll('#throughput svg rect.chart-bar').length > 1`, "the throughput chart")
	tb.screenshot("task-progress")
	tb.phoneWidth()
	tb.screenshot("task-progress-phone")
	tb.waitJS(`document.querySelector(`+quote(row)+`)?.dataset.state === "completed"`, "alice to complete")
	fetches := s.getCount(accountsPath) - fetchesBefore
	seen := evaluate[[]string](tb, `[...window.__seen]`)
	if folders := evaluate[[]string](tb, `[...window.__folders]`); len(folders) == 0 {
		t.Error("the row never said which folder was being copied")
	} else {
		t.Logf("folders named while copying: %q", folders)
	}
	if got := tb.text(row + " .progress-cell"); strings.Contains(got, "copying") || strings.Contains(got, "left") {
		t.Errorf("the completed row still says %q", got)
	}
	if totals := evaluate[[]string](tb, `[...window.__totals]`); len(totals) != 1 || !strings.HasPrefix(totals[0], "64/") || !strings.HasSuffix(totals[0], "/64") {
		t.Errorf("the row's total and bar while running: %q, want the source's 64 messages from the start", totals)
	}
	t.Logf("times left the row said: %q", evaluate[[]string](tb, `[...window.__left]`))
	if label := evaluate[string](tb, `document.querySelector('#throughput svg').getAttribute('aria-label')`); !strings.Contains(label, "average") {
		t.Errorf("the chart's label: %q", label)
	}
	// Axes with units: bytes a second from 0 to the peak, time from 0 s.
	axes := evaluate[[]string](tb, `[...document.querySelectorAll('#throughput .axis-y span, #throughput .axis-x span')].map((s) => s.textContent)`)
	if len(axes) != 6 || !strings.HasSuffix(axes[0], "/s") || axes[2] != "0" || axes[3] != "0 s" || axes[5] == "" {
		t.Errorf("the chart's axes say %q, want a rate scale down to 0 and a time scale from 0 s", axes)
	}
	t.Logf("the row showed %d figures while running, with %d requests for the accounts: %q", len(seen), fetches, seen)
	if len(seen) <= fetches {
		t.Errorf("the row showed %d figures while running with %d requests for the accounts: the figures must come from the events", len(seen), fetches)
	}
	tb.waitText(`#event-log li[data-kind="account.progress"]`, "alice: ")
}

// createAccount adds an account through the API.
func (s *site) createAccount(t *testing.T, taskID int64, in api.AccountInput) int64 {
	t.Helper()
	resp, err := s.Client.CreateAccountWithResponse(context.Background(), taskID, in)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create account: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201.Id
}

// testActWhileOthersRun: while a large mailbox copies, the operator fixes
// another account's password and retries it from its row, and cancels
// the large one alone from its row; the page follows without a reload.
func testActWhileOthersRun(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	users := map[string]string{"big": "b", "ann": "a"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
	old.Load(t, "big", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, LargeMessages: 1, LargeSize: 2 << 20}))
	old.Load(t, "ann", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 2}))
	// About a minute for big's corpus (2.4 MB), which must outlast the
	// operator's edit and retry even on a loaded CI machine (at 100 KB/s it
	// once ended first); ann's (360 KB) takes seconds.
	slowHost, slowPort := imaptest.SlowProxy(t, old.Addr(), 40_000)
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old (slow)", Host: slowHost, Port: slowPort, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "one large", src, dst)
	big := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "big", SourcePassword: "b"})
	ann := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "ann", SourcePassword: "wrong"})
	bigRow, annRow := fmt.Sprintf(`#account-list tr[data-id="%d"]`, big), fmt.Sprintf(`#account-list tr[data-id="%d"]`, ann)
	if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{Ids: []int64{big}}); err != nil || resp.JSON202 == nil {
		t.Fatalf("run big: %v %v", err, resp)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#stream-state", "live")
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__samePage = true`))
	tb.waitJS(`document.querySelector(`+quote(bigRow)+`)?.dataset.state === "running"`, "big to run")
	tb.waitJS(`document.querySelector(`+quote(bigRow+` button[data-action="edit"]`)+`).disabled
		&& !document.querySelector(`+quote(annRow+` button[data-action="edit"]`)+`).disabled
		&& document.querySelector(`+quote(annRow+` button[data-action="delete"]`)+`).disabled`,
		"big's row locked, ann's editable, no deletes while the task runs")

	// The rows redraw with big's progress while ann's Edit is clicked.
	tb.clickUntil(annRow+` button[data-action="edit"]`, `document.querySelector('#account-form h2')?.textContent.includes('Edit account ann')`,
		"#account-form h2 to say \"Edit account ann\"")
	tb.fill(map[string]string{"#account-form [name=source_password]": "a"})
	tb.click("#account-form button.primary")
	tb.waitText("#account-form .notice.ok", "Account ann saved.")
	tb.click(annRow + ` button[data-action="retry"]`)
	tb.waitText("main .notice.ok", "ann: retried and completed.")
	if state := evaluate[string](tb, `document.querySelector(`+quote(bigRow)+`).dataset.state`); state != "running" {
		t.Fatalf("big is %s once ann is done, want still running", state)
	}
	tb.waitText(`#event-log li[data-kind="run.joined"]`, "ann joins the pass under way")
	tb.screenshot("task-act-while-others-run")

	tb.click(bigRow + ` button[data-action="cancel-account"]`)
	tb.waitText("main .notice.ok", "big: canceled; the others go on.")
	tb.waitJS(`document.querySelector(`+quote(bigRow)+`)?.dataset.state === "canceled"`, "big to be canceled")
	tb.waitText("#task-summary h1 .badge", "completed with errors")
	tb.waitJS(`!document.querySelector(`+quote(bigRow+` button[data-action="retry"]`)+`).disabled`, "big's Retry once the run ended")
	if !evaluate[bool](tb, `window.__samePage === true`) {
		t.Error("the page reloaded")
	}
	passes := evaluate[int](tb, `document.querySelectorAll('#pass-list tbody tr').length`)
	if passes != 1 {
		t.Errorf("%d passes listed, want 1: ann joined big's", passes)
	}
}
