package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// testActivity: the Activity page lists the audit trail, newest first:
// what was asked in the API's words, whose token (here anyone's: the
// service asks for none), how it ended, with a
// refused request marked; and offers the whole trail as CSV.
func testActivity(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "imap.old.example", TlsMode: api.TLSModeSsl})
	if resp, err := s.Client.DeleteEndpointWithResponse(context.Background(), 999); err != nil || resp.StatusCode() != http.StatusNotFound {
		t.Fatalf("delete a missing endpoint: %v %v", err, resp)
	}
	tb := openTab(t, browser, s)
	tb.open("#/tasks")
	tb.click("#nav-activity")
	tb.waitText("h1", "Activity")
	tb.waitText("#activity-list tbody tr:nth-child(1)", "Delete an endpoint that no task uses.")
	tb.waitText("#activity-list tbody tr:nth-child(1)", "refused (404 Not Found)")
	tb.waitText("#activity-list tbody tr:nth-child(1)", "anyone: the service asks for no token")
	tb.waitJS(`document.querySelector('#activity-list tbody tr:nth-child(1)').classList.contains('failure')`, "the refused request marked")
	tb.waitText("#activity-list tbody tr:nth-child(2)", "Register an IMAP server.")
	tb.waitText("#activity-list tbody tr:nth-child(2)", "done (201 Created)")
	tb.waitJS(`document.querySelectorAll('#activity-list tbody tr').length === 2`, "two entries: reads are not in the trail")
	tb.waitJS(`document.querySelector('#activity-csv').getAttribute('href') === '/api/v1/audit.csv'`, "the CSV link")
	tb.screenshot("activity")
}
