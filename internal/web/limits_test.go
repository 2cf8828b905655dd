package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// testPausedAccount: a run into a destination whose daily upload budget
// takes three messages copies three, and the account's row then says
// until when it waits and why: queued, "paused until <date and time>:
// the endpoint's daily upload budget … is spent".
func testPausedAccount(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"big": "pw"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"big": "pw"}})
	message := func(i int) []byte {
		return fmt.Appendf(nil, "Subject: %02d\r\nMessage-ID: <%02d@budget.test>\r\n\r\n%s\r\n", i, i, strings.Repeat("x", 2000))
	}
	old.WriteInbox(t, "big", 8, message)
	size := int64(len(message(0)))
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain,
		Limits: &api.EndpointLimits{DailyUploadBytes: 3 * size}})
	taskID := s.createTask(t, "budget", src, dst)
	big := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "big", SourcePassword: "pw", DestinationPassword: "pw"})
	row := fmt.Sprintf(`#account-list tr[data-id="%d"]`, big)

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#stream-state", "live")
	tb.click(`#task-summary button[data-action="run"]`)
	tb.waitText(`#event-log li[data-kind="account.throttled"]`, "daily upload budget")
	tb.waitText(row, "paused until")
	text := tb.text(row)
	for _, want := range []string{"3 of 8 messages copied", "the endpoint's daily upload budget", "is spent"} {
		if !strings.Contains(text, want) {
			t.Errorf("the paused account's row %q lacks %q", text, want)
		}
	}
	if state := evaluate[string](tb, `document.querySelector(`+quote(row)+`).dataset.state`); state != string(api.AccountStateQueued) {
		t.Errorf("the paused account's row is %q, want queued", state)
	}
	tb.screenshot("account-paused-budget")
}
