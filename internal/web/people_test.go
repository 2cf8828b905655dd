package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// testPeople: an admin adds a viewer on the People page and sees their
// first token once; the viewer, signed in with it in another browser,
// sees who they are, no users, and is refused a change in words; makes a
// token of their own and revokes it after a confirmation; the admin then
// deletes the viewer.
func testPeople(t *testing.T, browser context.Context) {
	const adminToken = "admin-token-0123456789"
	s := startSiteWith(t, adminToken, servicetest.Options{DatabaseTokens: true})
	signIn := func(token string) *tab {
		tb := openTab(t, browser, s)
		tb.run(chromedp.Navigate(tb.site.front + "/#/people")) // the page waits behind the token prompt
		tb.waitText("dialog[open]", "This service needs you to sign in, with your name and password or with an API token.")
		tb.fill(map[string]string{"#token-input": token})
		tb.click("#token-ok")
		return tb
	}

	admin := signIn(adminToken)
	admin.waitText("#people-me", "the API token configured (MAILMIGRATE_API_TOKEN), admin")
	admin.fill(map[string]string{"#user-form [name=name]": "ann@example.com"})
	admin.choose("#user-form [name=role]", "viewer")
	admin.click("#user-form button.primary")
	admin.waitText("main .notice.ok", "ann@example.com added as viewer. Hand them their first token.")
	admin.waitText("#user-list", "ann@example.com")
	secret := evaluate[string](admin, `document.querySelector('#new-token-secret').textContent`)
	if len(secret) < 60 {
		t.Fatalf("the first token shown: %q", secret)
	}
	admin.screenshot("people")

	ann := signIn(secret)
	ann.waitText("#people-me", "ann@example.com (viewer)")
	ann.waitText("#token-list", "first token")
	if n := evaluate[int](ann, `document.querySelectorAll('#user-form, #user-list').length`); n != 0 {
		t.Errorf("a viewer is shown the users (%d elements)", n)
	}
	ann.fill(map[string]string{"#token-form [name=name]": "laptop", "#token-form [name=expires_in_days]": "7"})
	ann.click("#token-form button.primary")
	ann.waitText("main .notice.ok", "(laptop) made, with your role.")
	ann.waitText("#token-list", "laptop")
	ann.click(`#token-list tbody tr:first-child [data-action=revoke]`)
	ann.confirm("Revoke token", true)
	ann.waitText("main .notice.ok", "revoked.")
	ann.waitText("#token-list tbody tr:first-child", "revoked")

	ann.open("#/endpoints")
	ann.fill(map[string]string{"#endpoint-form [name=host]": "imap.old.example"})
	ann.click("#endpoint-form button.primary")
	ann.waitText("#endpoint-form .notice.error", "forbidden: this needs the admin role; ann@example.com (viewer)")

	admin.open("#/people")
	admin.click(`#user-list [data-action=delete]`)
	admin.confirm("Delete ann@example.com?", true)
	admin.waitText("main .notice.ok", "ann@example.com deleted, with their tokens.")
	admin.waitText("#users", "No user yet")
}
