package web_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// xss is markup that would run (or at least create an element) if the page
// ever put a server's text into innerHTML.
const xss = `<img src=x onerror="window.__xss=1">`

// testConnectionTestLog runs a login test whose source password is wrong
// and whose destination host is markup: the log names host:port and the
// server's error, shows the markup as text and runs nothing; after the
// event stream drops, it reconnects and catches up with no line twice.
func testConnectionTestLog(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a"}})
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: xss, Host: xss, Port: 993, TlsMode: api.TLSModeSsl})
	taskID := s.createTask(t, xss, src, dst)
	created, err := s.Client.CreateAccountWithResponse(context.Background(), taskID, api.AccountInput{
		SourceLogin: "alice", SourcePassword: "wrong", DestinationLogin: xss, DestinationPassword: "x"})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create account: %v", err)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#stream-state", "live")
	tb.click(`#task-summary button[data-action="test"]`)
	sourceLine := fmt.Sprintf("source: alice → %s: authentication failed", old.Addr())
	tb.waitText(`#event-log li[data-kind="test.failed"]`, sourceLine)
	destinationLine := "destination: " + xss + " → " + xss + ":993: "
	tb.waitJS(`[...document.querySelectorAll('#event-log li[data-kind="test.failed"]')].some((li) => li.textContent.includes(`+quote(destinationLine)+`))`,
		"the destination's test.failed line, markup as text")
	tb.waitText("#account-list", "source: authentication failed")
	tb.waitText("#account-list", "What to do: Check the source login alice and its password")
	tb.waitText("#task-summary", "1 of 1 accounts tested, 1 failed")
	// The accounts whose login test failed are one choice away; those
	// that passed, none here.
	tb.choose("#account-login-test", "passed")
	tb.waitText("#account-range", "No account")
	tb.choose("#account-login-test", "failed")
	tb.waitText("#account-list", "source: authentication failed")
	tb.waitText("#account-list", xss)
	tb.waitText("#task-summary h1", xss)
	tb.screenshot("task-test-failed")
	tb.requireNoMarkupRan()
	tb.open("#/tasks")
	tb.waitText("#task-list", xss+" (")
	tb.requireNoMarkupRan()
	tb.open("#/endpoints")
	tb.waitText("#endpoint-list", xss)
	tb.requireNoMarkupRan()

	// The stream drops: the page says so, reconnects after the last seq it
	// saw, and shows the next test's lines once each.
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitJS(`document.querySelectorAll('#event-log li').length === 2`, "the two stored events replayed")
	tb.waitText("#stream-state", "live")
	s.dropSockets()
	tb.waitText("#stream-state", "reconnecting…")
	tb.waitText("#stream-state", "live")
	tb.waitJS(`!document.querySelector('#task-summary button[data-action="test"]').disabled`, "the task to be idle again")
	tb.click(`#task-summary button[data-action="test"]`)
	tb.waitJS(`document.querySelectorAll('#event-log li').length >= 4`, "the second test's events")
	seqs := evaluate[[]string](tb, `[...document.querySelectorAll('#event-log li')].map((li) => li.dataset.seq)`)
	events, err := s.Client.ListTaskEventsWithResponse(context.Background(), taskID, nil)
	if err != nil || events.JSON200 == nil {
		t.Fatalf("list events: %v", err)
	}
	if len(seqs) != len(*events.JSON200) {
		t.Fatalf("the log shows seqs %v, the service stored %d events", seqs, len(*events.JSON200))
	}
	for i, e := range *events.JSON200 {
		if seqs[i] != fmt.Sprint(e.Seq) {
			t.Errorf("log line %d has seq %s, want %d", i, seqs[i], e.Seq)
		}
	}
}

// requireNoMarkupRan fails when text from the service became an element or ran.
func (tb *tab) requireNoMarkupRan() {
	tb.t.Helper()
	if n := evaluate[int](tb, `document.querySelectorAll('img').length`); n != 0 {
		tb.t.Errorf("%d img elements in the page: text became markup", n)
	}
	if ran := evaluate[bool](tb, `window.__xss !== undefined`); ran {
		tb.t.Error("the markup's script ran")
	}
}
