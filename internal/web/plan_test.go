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
// account and shows, per account, what is to copy and what blocks it, in
// words; nothing is copied.
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
	if resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader("alice,a\nbob,b\n")); err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#plan-summary", "No plan yet")
	tb.click(`#plan button[data-action="plan"]`)
	tb.waitText("#plan .notice.ok", "Planning 2 accounts: nothing is copied.")
	tb.waitText("#plan-summary", "2 planned, 0 pending, 0 failed, 1 blocked")
	tb.waitText(`#plan-list tr[data-blocking="true"]`, "bob")
	tb.waitText(`#plan-list tr[data-blocking="true"]`, "Blocking: the destination's quota leaves 1.0 MB free")
	tb.waitText(`#plan-list tr[data-blocking="false"]`, "alice")
	tb.screenshot("plan")
	if n := len(neu.Read(t, "alice").Messages) + len(neu.Read(t, "bob").Messages); n != 0 {
		t.Errorf("the plan copied %d messages", n)
	}
}
