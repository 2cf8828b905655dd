package web_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// testSignIn: a user with a password signs in to the console with their
// name: a wrong password is refused in the dialog, the right one opens
// the pages; the live event log runs on the session's cookie, a change
// carries the session's CSRF token, the page holds no API token; signing
// out asks again.
func testSignIn(t *testing.T, browser context.Context) {
	s := startSiteWith(t, "admin-token-0123456789", servicetest.Options{DatabaseTokens: true})
	ctx := context.Background()
	user, _, err := s.App.Service.CreateUser(ctx, migration.UserInput{Name: "ann@example.com", Role: migration.RoleOperator}, migration.TokenInput{Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.App.Service.SetPassword(ctx, migration.Principal{Role: migration.RoleAdmin}, user.ID, "a long enough passphrase"); err != nil {
		t.Fatal(err)
	}
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "imap.old.example", TlsMode: api.TLSModeSsl})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	taskID := s.createTask(t, "signed in", src, dst)

	tb := openTab(t, browser, s)
	tb.run(chromedp.Navigate(tb.site.front + fmt.Sprintf("/#/tasks/%d", taskID))) // the page waits behind the sign-in
	tb.waitText("dialog[open]", "This service needs you to sign in")
	tb.fill(map[string]string{"#signin-name": "ann@example.com", "#signin-password": "a wrong passphrase"})
	tb.click("#signin-ok")
	tb.waitText("#signin-error", "Not signed in: name or password is wrong")
	tb.fill(map[string]string{"#signin-password": "a long enough passphrase"})
	tb.click("#signin-ok")
	tb.waitText("#task-summary h1", "signed in")
	tb.waitText("#stream-state", "live")
	if token := evaluate[string](tb, `sessionStorage.getItem('mailmigrate.apiToken') || ''`); token != "" {
		t.Errorf("the tab holds an API token after a password sign-in: %q", token)
	}
	if cookies := evaluate[string](tb, `document.cookie`); cookies != "" {
		t.Errorf("the page can read cookies %q: the session's must be HttpOnly", cookies)
	}

	tb.open("#/people")
	tb.waitText("#people-me", "ann@example.com (operator), console session")
	tb.fill(map[string]string{"#token-form [name=name]": "laptop"})
	tb.click("#token-form button.primary")
	tb.waitText("main .notice.ok", "(laptop) made, with your role.")

	// Signing out reloads the page, which asks again.
	tb.click(`#people-me [data-action="sign-out"]`)
	tb.run(chromedp.WaitVisible(chromedp.CSS(`dialog[open] #signin-form`)))
	tb.waitText("dialog[open]", "This service needs you to sign in")
}
