package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// testSignInLink: the link `mailmigrate serve` prints, the console's
// address with #token=…, signs the tab in without a prompt, and the token
// leaves the address bar and the history at once.
func testSignInLink(t *testing.T, browser context.Context) {
	s := startSite(t, "mmt_0123456789abcdef0123456789abcdef")
	s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "imap.old.example", TlsMode: api.TLSModeSsl})
	tb := openTab(t, browser, s)
	tb.run(chromedp.Navigate(tb.site.front + "/#token=mmt_0123456789abcdef0123456789abcdef"))
	tb.waitJS(`location.hash === '#/tasks' && document.querySelector('main .view:not([aria-busy])') !== null`, "the task list, signed in")
	tb.open("#/endpoints")
	tb.waitText("#endpoint-list", "imap.old.example")
	if n := evaluate[int](tb, `document.querySelectorAll('dialog[open]').length`); n != 0 {
		t.Errorf("%d dialogs open: the link should sign in without asking", n)
	}
	tb.run(chromedp.NavigateBack())
	if where := evaluate[string](tb, `location.href`); strings.Contains(where, "mmt_") {
		t.Errorf("the token is still in the address, or in the history: %s", where)
	}
	if n := s.tokenInURLCount(); n != 0 {
		t.Errorf("%d requests carried the token in their URL", n)
	}
}

// testTokenPrompt: a service that wants a token answers 401; the page asks
// for it once, keeps it in sessionStorage, and the REST calls and the
// event stream then carry it, the stream as its subprotocol, never in a
// URL. An account added there leaves no password in the page.
func testTokenPrompt(t *testing.T, browser context.Context) {
	s := startSite(t, "s3cret-token")
	ep := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "imap.old.example", TlsMode: api.TLSModeSsl})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	taskID := s.createTask(t, "with a token", ep, dst)

	tb := openTab(t, browser, s)
	tb.run(chromedp.Navigate(tb.site.front + "/#/endpoints")) // not open: the page waits behind the dialog
	tb.waitText("dialog[open]", "This service needs you to sign in, with your name and password or with an API token.")
	tb.screenshot("token-prompt")
	tb.fill(map[string]string{"#token-input": "wrong"})
	tb.click("#token-ok")
	tb.waitText("dialog[open]", "The service did not accept that token.")
	tb.fill(map[string]string{"#token-input": "s3cret-token"})
	tb.click("#token-ok")
	tb.waitText("#endpoint-list", "imap.old.example")
	if got := evaluate[string](tb, `sessionStorage.getItem('mailmigrate.apiToken')`); got != "s3cret-token" {
		t.Errorf("sessionStorage holds %q", got)
	}
	if n := evaluate[int](tb, `localStorage.length`); n != 0 {
		t.Errorf("localStorage holds %d items: the token must not outlive the tab", n)
	}
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#task-summary h1", "with a token")
	tb.waitText("#stream-state", "live")
	if n := s.tokenInURLCount(); n != 0 {
		t.Errorf("%d requests carried the token in their URL, which logs and histories keep", n)
	}

	tb.fill(map[string]string{
		"#account-form [name=source_login]":         "carol@old.example",
		"#account-form [name=source_password]":      "carol-old-secret",
		"#account-form [name=destination_password]": "carol-new-secret",
	})
	tb.click("#account-form button.primary")
	tb.waitText("#account-form .notice.ok", "Account carol@old.example added.")
	tb.waitText("#account-list", "carol@old.example")
	left := evaluate[[]string](tb, `[...document.querySelectorAll('#account-form input[type=password]')].map((i) => i.value)`)
	if len(left) != 2 || left[0] != "" || left[1] != "" {
		t.Errorf("password inputs after submit hold %q, want them empty", left)
	}
	if page := evaluate[string](tb, `document.documentElement.outerHTML`); strings.Contains(page, "carol-old-secret") || strings.Contains(page, "carol-new-secret") {
		t.Error("a password is still in the page")
	}
	accounts, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, nil)
	if err != nil || accounts.JSON200 == nil || len(*accounts.JSON200) != 1 || (*accounts.JSON200)[0].DestinationPasswordSameAsSource {
		t.Errorf("carol, added with a destination password of her own: %v %+v", err, accounts)
	}
}
