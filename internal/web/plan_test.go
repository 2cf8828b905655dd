package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// testPlan: on the task page, "Plan (dry run)" reads both servers of every
// account and lists first the accounts with a problem, 50 at a time, each
// in words; another listing shows them all. An account's page shows its
// plan whole, folder by folder, and plans it again. Nothing is copied.
func testPlan(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	users := map[string]string{"alice": "a", "bob": "b"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, QuotaBytes: 1 << 20})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 5}))
	old.Load(t, "bob", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 2, Messages: 200}))
	src := s.createEndpoint(t, api.EndpointInput{Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "plan first", src, dst)
	// 55 accounts the servers do not know: their plans fail, so that the
	// accounts with a problem take two pages.
	csv := "alice,a\nbob,b\n"
	for i := range 55 {
		csv += fmt.Sprintf("gone%02d,x\n", i)
	}
	if resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader(csv)); err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#plan-summary", "No plan yet")
	tb.click(`#plan button[data-action="plan"]`)
	tb.waitText("#plan .notice.ok", "Planning 57 accounts: nothing is copied.")
	tb.waitText("#plan-summary", "2 planned, 0 pending, 55 failed, 1 blocked")
	tb.waitText("#plan-listed", "50 of 56 accounts.")
	tb.waitText(`#plan-list tr[data-blocking="true"]`, "bob")
	tb.waitText(`#plan-list tr[data-blocking="true"]`, "Blocking: the destination's quota leaves 1.0 MB free")
	tb.waitText(`#plan-list tbody tr:nth-child(2)`, "Not planned:")
	tb.click(`#plan button[data-action="plan-more"]`)
	tb.waitText("#plan-listed", "56 of 56 accounts.")
	tb.waitJS(`document.querySelector('#plan button[data-action="plan-more"]').hidden`, "no more to show")
	if strings.Contains(tb.text("#plan-list"), "alice") {
		t.Error("alice, whose plan found nothing in the way, is listed among the accounts with a problem")
	}
	tb.choose("#plan-filter", string(api.PlanFilterBlocking))
	tb.waitText("#plan-listed", "1 of 1 account.")
	tb.choose("#plan-filter", string(api.PlanFilterAll))
	tb.waitText("#plan-listed", "50 of 57 accounts.")
	tb.waitText(`#plan-list tr[data-blocking="false"]`, "alice")
	tb.screenshot("plan")

	// alice's page: her plan, whole; planned again from there.
	tb.click(`#plan-list tr[data-blocking="false"] a`)
	tb.waitText("#account-plan-state", "Plan done")
	tb.waitText("#account-plan", "Nothing stands in the way.")
	tb.waitText(`#account-plan-folders tr[data-folder="INBOX"]`, "INBOX")
	tb.waitText("#account-plan", "Destination offers")
	tb.click(`#account-plan button[data-action="plan-account"]`)
	tb.waitText("#account-plan .notice.ok", "Planning: both servers are read, nothing is copied.")
	tb.waitText("#account-plan-state", "Plan done")
	tb.screenshot("account-plan")
	if n := len(neu.Read(t, "alice").Messages) + len(neu.Read(t, "bob").Messages); n != 0 {
		t.Errorf("the plan copied %d messages", n)
	}
}
