package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// testServiceDownAndEmptyTask: a task without accounts offers no run,
// test or report; an unencrypted endpoint is marked unsafe; the tab names
// the task; the service going down shows a banner that goes, with the
// errors it caused, once the service answers again; the page follows
// the system's dark mode.
func testServiceDownAndEmptyTask(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "imap.old.example", Port: 143, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	taskID := s.createTask(t, "empty one", src, dst)

	tb := openTab(t, browser, s)
	tb.open("#/endpoints")
	tb.waitText(fmt.Sprintf(`#endpoint-list tr[data-id="%d"]`, src), "unsafe: unencrypted")
	if text := tb.text(fmt.Sprintf(`#endpoint-list tr[data-id="%d"]`, dst)); strings.Contains(text, "unsafe") {
		t.Errorf("the ssl endpoint is marked unsafe: %q", text)
	}

	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#accounts", "No account yet")
	for _, sel := range []string{`#task-summary button[data-action="run"]`, `#task-summary button[data-action="test"]`, "#report-link"} {
		if !evaluate[bool](tb, fmt.Sprintf(`document.querySelector(%s).disabled`, quote(sel))) {
			t.Errorf("%s is enabled on a task without accounts", sel)
		}
	}
	if title := evaluate[string](tb, `document.title`); title != "empty one — mailmigrate" {
		t.Errorf("tab title %q", title)
	}

	// Down: an action fails, the banner says why.
	s.setAPIDown(true)
	tb.typeUntil("#account-search", "x", `!document.querySelector('#outage').hidden`, "the outage banner")
	tb.waitText("#task-summary ~ .notice", "The accounts could not be listed: the service does not answer")
	tb.screenshot("service-down")
	// Back: the next request clears the banner and the stale error.
	s.setAPIDown(false)
	tb.typeUntil("#account-search", "y", `document.querySelector('#outage').hidden`, "the outage banner to go")
	tb.waitJS(`[...document.querySelectorAll('.notice.error')].every((n) => n.hidden)`, "the outage's error to go")

	resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader("ann,pw\n"))
	if err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}
	if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#account-list", "ann")
	if bg := evaluate[string](tb, `getComputedStyle(document.documentElement).backgroundColor`); bg != "rgb(17, 21, 27)" {
		t.Errorf("dark mode background %s", bg)
	}
	if evaluate[bool](tb, `document.querySelector('#task-summary button[data-action="run"]').disabled`) {
		t.Error("Run is disabled on a task with an account")
	}
	tb.screenshot("task-dark")
}
