package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// testLongLoginTest: a login test against a source that does not answer
// (as one behind a penalty for failed logins) is under way for long. The
// task page says how far it got and that it is under way, keeps Run and
// the account buttons usable, offers to cancel it, and says when it is
// canceled.
func testLongLoginTest(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	mute := imaptest.StartMute(t)
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"ann": "a"}})
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old (silent)", Host: mute.Host, Port: mute.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "long test", src, dst)
	ann := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "ann", SourcePassword: "a"})
	s.createAccount(t, taskID, api.AccountInput{SourceLogin: "bob", SourcePassword: "b"})

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#stream-state", "live")
	tb.click(`#task-summary button[data-action="test"]`)
	tb.waitText("main .notice.ok", "Login test started")
	tb.waitText("#task-tests", "0 of 2 accounts tested, 0 failed, under way")
	tb.waitJS(`document.querySelector('#task-summary button[data-action="test"]').disabled
		&& !document.querySelector('#task-summary button[data-action="run"]').disabled
		&& !document.querySelector('#task-summary button[data-action="cancel"]').disabled`,
		"Test logins disabled, Run and Cancel enabled while the test is under way")
	if label := tb.text(`#task-summary button[data-action="cancel"]`); label != "Cancel login test" {
		t.Errorf("the cancel button reads %q", label)
	}
	if !evaluate[bool](tb, fmt.Sprintf(`!document.querySelector('#account-list tr[data-id="%d"] button[data-action="edit"]').disabled`, ann)) {
		t.Error("ann cannot be edited while her login is being tested")
	}
	tb.screenshot("task-long-login-test")
	tb.click(`#task-summary button[data-action="cancel"]`)
	tb.waitText("main .notice.ok", "Canceling the login test: long test.")
	tb.waitText("#task-tests", "0 of 2 accounts tested, 0 failed")
	tb.waitJS(`!document.querySelector('#task-tests').textContent.includes('under way')
		&& !document.querySelector('#task-summary button[data-action="test"]').disabled`, "the test to end, and Test logins to be enabled again")
	tb.waitText(`#event-log li[data-kind="test.canceled"]`, "connection test canceled")
}

// testConfirmOnManyAccounts: on a task of many accounts, Run, Test logins
// and Cancel ask first, naming how many accounts; declined, nothing
// starts.
func testConfirmOnManyAccounts(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	mute := imaptest.StartMute(t)
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old (silent)", Host: mute.Host, Port: mute.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new (silent)", Host: mute.Host, Port: mute.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "hosting", src, dst)
	var csv strings.Builder
	for i := range 25 {
		fmt.Fprintf(&csv, "user%02d,pw\n", i)
	}
	if resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader(csv.String())); err != nil || resp.StatusCode() != 201 {
		t.Fatalf("import: %v %v", err, resp)
	}
	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.click(`#task-summary button[data-action="run"]`)
	tb.confirm("Run hosting: its 25 accounts? Each copies only what is new.", false)
	if task, err := s.Client.GetTaskWithResponse(context.Background(), taskID); err != nil || task.JSON200.State != api.TaskStateIdle {
		t.Errorf("after declining Run the task is %v (%v), want idle", task.JSON200.State, err)
	}
	tb.click(`#task-summary button[data-action="test"]`)
	tb.confirm("Test the logins of the 25 accounts of hosting?", true)
	tb.waitText("#task-tests", "0 of 25 accounts tested, 0 failed, under way")
	tb.click(`#task-summary button[data-action="cancel"]`)
	tb.confirm("Cancel what hosting is doing?", true)
	tb.waitText("main .notice.ok", "Canceling the login test: hosting.")
}
