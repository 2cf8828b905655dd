package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// testManyAccounts: a task of 2 000 accounts shows a page of 50 with the
// running ones first; the pager (above and below), the state chips and the
// search find the others. Failed rows are dense (15 or more to a screen of
// 800 px), editing a row on page 3 keeps it in view, and neither the task
// page nor an account's page shows an API path, null or undefined.
func testManyAccounts(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "imap.old.example", Port: 993, TlsMode: api.TLSModeSsl})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: "imap.new.example", Port: 993, TlsMode: api.TLSModeSsl})
	taskID := s.createTask(t, "hosting move", src, dst)
	s.importNumbered(t, taskID, "user%04d@old.example", 2000)
	// A run's aftermath as the page would meet it: some failed, some still
	// running (set directly: no server is needed to draw them).
	if _, err := s.Pool.Exec(context.Background(), `
		UPDATE accounts SET
		  state = CASE WHEN source_login LIKE '%00@%' THEN 'failed' WHEN source_login LIKE 'user19_7@%' THEN 'running' ELSE 'completed' END,
		  last_error = CASE WHEN source_login LIKE '%00@%' THEN 'source ' || source_login || ' at imap.old.example:993: authentication failed: ' ||
		    '[AUTHENTICATIONFAILED] Authentication failed. What to do: Check the source login ' || source_login ||
		    ' and its password (Edit the account), or the endpoint''s master login.' ELSE '' END,
		  source_test_ok = CASE WHEN source_login LIKE '%00@%' THEN false END,
		  source_test_error = CASE WHEN source_login LIKE '%00@%' THEN 'source ' || source_login || ' at imap.old.example:993: authentication failed: ' ||
		    '[AUTHENTICATIONFAILED] Authentication failed.' ELSE '' END,
		  source_tested_at = CASE WHEN source_login LIKE '%00@%' THEN now() END
		WHERE task_id = $1`, taskID); err != nil {
		t.Fatal(err)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#account-range", "Accounts 1–50 of 2000")
	// The pager is above the list too, with the count.
	tb.waitText("#account-pager-top", "Accounts 1–50 of 2000")
	rows := func() int { return evaluate[int](tb, `document.querySelectorAll('#account-list tbody tr').length`) }
	if n := rows(); n != 50 {
		t.Errorf("%d rows on the first page, want 50", n)
	}
	// Running first, then the failed.
	firstStates := evaluate[string](tb, `[...document.querySelectorAll('#account-list tbody tr')].slice(0, 12).map((r) => r.dataset.state).join(' ')`)
	if want := strings.TrimSpace(strings.Repeat("running ", 10) + "failed failed"); firstStates != want {
		t.Errorf("first rows' states %q, want %q", firstStates, want)
	}
	if height := evaluate[int](tb, `document.documentElement.scrollHeight`); height > 12000 {
		t.Errorf("the page is %d px tall with 2 000 accounts", height)
	}
	tb.screenshot("many-accounts")

	firstOnPage := func() string { return tb.text("#account-list tbody tr td.login") }
	page1 := firstOnPage()
	tb.click(`#account-pager button[data-action="next-page"]`)
	tb.waitText("#account-range", "Accounts 51–100 of 2000")
	if firstOnPage() == page1 {
		t.Error("the next page starts with the same account")
	}
	tb.click(`#account-pager-top button[data-action="previous-page"]`)
	tb.waitText("#account-range", "Accounts 1–50 of 2000")
	if got := firstOnPage(); got != page1 {
		t.Errorf("back on the first page it starts with %q, want %q", got, page1)
	}

	// The failed chip: the 20 failed accounts, and nothing else.
	tb.waitText(`#state-chips button[data-state="failed"]`, "failed 20")
	tb.click(`#state-chips button[data-state="failed"]`)
	tb.waitText("#account-range", "Accounts 1–20 of 20 that match")
	if n := evaluate[int](tb, `document.querySelectorAll('#account-list tbody tr:not([data-state="failed"])').length`); n != 0 || rows() != 20 {
		t.Errorf("the failed chip shows %d rows, %d of them not failed", rows(), n)
	}
	if pressed := evaluate[string](tb, `document.querySelector('#state-chips [aria-pressed="true"]').dataset.state`); pressed != "failed" {
		t.Errorf("pressed chip %q", pressed)
	}
	// Dense rows: a failed account is one line of its error, in words,
	// with the rest on demand, so that a screen of 800 px holds 15 of them.
	rowHeight := evaluate[float64](tb, `(() => { const rows = [...document.querySelectorAll('#account-list tbody tr')];
		return rows.reduce((sum, r) => sum + r.getBoundingClientRect().height, 0) / rows.length; })()`)
	t.Logf("failed rows are %.0f px tall on average: %.1f to a screen of 800 px", rowHeight, 800/rowHeight)
	if 800/rowHeight < 15 {
		t.Errorf("failed rows are %.0f px tall on average: %.1f to a screen of 800 px, want 15", rowHeight, 800/rowHeight)
	}
	tb.screenshot("many-accounts-failed")

	// A search among all states, as typed.
	tb.click(`#state-chips button[data-state="all"]`)
	tb.waitText("#account-range", "Accounts 1–50 of 2000")
	tb.run(chromedp.SendKeys("#account-search", "USER123"))
	tb.waitText("#account-range", "of 10 that match")
	if got := evaluate[string](tb, `[...document.querySelectorAll('#account-list td.login')].map((c) => c.textContent.slice(0, 8)).join(' ')`); got != "user1230 user1231 user1232 user1233 user1234 user1235 user1236 user1237 user1238 user1239" {
		t.Errorf("search USER123: %q", got)
	}
	evaluate[string](tb, `document.querySelector('#account-search').value = ''`)
	tb.run(chromedp.SendKeys("#account-search", "nobody"))
	tb.waitText("#accounts", "No account matches")

	// Editing a row on page 3 keeps the operator's place: the form opens
	// in view below the row, and after Save the row is still in view.
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#account-range", "Accounts 1–50 of 2000")
	for _, want := range []string{"Accounts 51–100 of 2000", "Accounts 101–150 of 2000"} {
		tb.click(`#account-pager button[data-action="next-page"]`)
		tb.waitText("#account-range", want)
	}
	row := `#account-list tbody tr:nth-child(30)`
	login := tb.text(row + " td.login a")
	tb.click(row + ` button[data-action="edit"]`)
	tb.waitJS(`(() => { const f = document.querySelector('tr.edit-row form'); if (!f) return false;
		const r = f.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; })()`, "the edit form in view below the row")
	tb.click(`tr.edit-row form button.primary`)
	tb.waitText("tr.edit-row .notice.ok, #account-form .notice.ok", "Account "+login+" saved.")
	inView := fmt.Sprintf(`(() => { const a = [...document.querySelectorAll('#account-list td.login a')].find((a) => a.textContent === %s);
		if (!a) return false; const r = a.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`, quote(login))
	tb.waitJS(inView, login+"'s row still in view after Save")
	if got := tb.text("#account-range"); !strings.HasPrefix(got, "Accounts 101–150") {
		t.Errorf("after Save the list shows %q, want page 3 still", got)
	}
	tb.screenshot("many-accounts-edited")

	// No raw word on the task page nor on an account's page.
	for _, page := range []string{"#task-summary", "#accounts"} {
		noRawWord(t, tb, page)
	}
	tb.click(row + " td.login a")
	tb.waitText("#account-summary h1", login)
	noRawWord(t, tb, "main")
}

// testBulkActions: ticked rows are deleted after one confirmation that
// names their count, a chip's accounts get the bulk bar, and "Retry the
// failed" runs the failed accounts alone.
func testBulkActions(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	// Nothing listens on port 1: the retried accounts fail to connect and
	// wait for their next retry, far beyond the test.
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "127.0.0.1", Port: 1, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: "127.0.0.1", Port: 2, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "bulk", src, dst)
	s.importNumbered(t, taskID, "user%03d", 120)
	if _, err := s.Pool.Exec(context.Background(), `
		UPDATE accounts SET state = CASE WHEN source_login LIKE '%0' OR source_login LIKE '%5' THEN 'failed' ELSE 'completed' END
		WHERE task_id = $1`, taskID); err != nil {
		t.Fatal(err)
	}
	states := func() map[string]int {
		counts := map[string]int{}
		rows, err := s.Pool.Query(context.Background(), `SELECT state FROM accounts WHERE task_id = $1`, taskID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var state string
			rows.Scan(&state) //nolint:errcheck // rows.Err says
			counts[state]++
		}
		return counts
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#account-range", "Accounts 1–50 of 120")
	if visible := evaluate[bool](tb, `!document.querySelector('#bulk-actions').hidden`); visible {
		t.Error("the bulk bar shows with nothing chosen")
	}
	for i := 1; i <= 3; i++ {
		tb.click(fmt.Sprintf(`#account-list tbody tr:nth-child(%d) input[data-action="tick"]`, i))
	}
	tb.waitText("#bulk-actions", "3 selected:")
	tb.click(`#bulk-actions button[data-action="delete-chosen"]`)
	tb.confirm("Delete 3 accounts from this task?", true)
	tb.waitText("#task-summary ~ .notice", "3 accounts deleted.")
	tb.waitText("#account-range", "Accounts 1–50 of 117")
	if got := states(); got["failed"] != 21 || got["completed"] != 96 {
		t.Errorf("after deleting the three first rows (failed): %v", got)
	}

	tb.click("#tick-page")
	tb.waitText("#bulk-actions", "50 selected:")
	tb.click("#tick-page")
	tb.waitJS(`document.querySelector('#bulk-actions').hidden`, "the bulk bar to go with nothing chosen")

	tb.click(`#state-chips button[data-state="failed"]`)
	tb.waitText("#bulk-actions", "21 that match:")
	tb.screenshot("bulk-actions")
	tb.click(`#follow-up button[data-action="retry-failed"]`)
	tb.waitText("#task-summary ~ .notice", "Running 21 accounts: the failed ones.")
	if got := states(); got["completed"] != 96 || got["queued"]+got["running"]+got["failed"] != 21 || got["failed"] == 21 {
		t.Errorf("after retrying the failed: %v", got)
	}
	if resp, err := s.Client.CancelTaskWithResponse(context.Background(), taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("cancel: %v %v", err, resp)
	}
}

// noRawWord fails t when what sel shows holds one of rawWords: an API
// path, null or undefined.
func noRawWord(t *testing.T, tb *tab, sel string) {
	t.Helper()
	text := tb.text(sel)
	for _, raw := range rawWords {
		if strings.Contains(text, raw) {
			t.Errorf("%s says %q, which holds %q", sel, text, raw)
		}
	}
}
