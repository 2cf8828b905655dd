package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// testAccountPage opens an account's page from its login in the task's
// table after two passes: what each pass did for it, its folders with
// where each went, its events; "Run again" there adds a third pass, which
// the page shows live.
func testAccountPage(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "a"}})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 4}))
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "two passes", src, dst)
	alice := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "alice", SourcePassword: "a"})
	for range 2 {
		if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.JSON202 == nil {
			t.Fatalf("run: %v %v", err, resp)
		}
		servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.click(fmt.Sprintf(`#account-list tr[data-id="%d"] td.login a`, alice))
	tb.waitText("#account-summary h1", "alice")
	tb.waitJS(`document.querySelectorAll('#account-pass-list tbody tr').length === 2`, "two passes")
	tb.waitText(`#account-pass-list tr[data-pass="2"]`, "0 messages")
	tb.waitText(`#account-folder-list tr[data-folder="Sent Items"]`, "INBOX.Sent")
	tb.waitJS(`document.querySelectorAll('#account-events li[data-kind="account.done"]').length === 2`, "both runs' account.done")
	tb.screenshot("account-page")

	tb.click(`#account-summary button[data-action="retry"]`)
	tb.waitJS(`document.querySelectorAll('#account-pass-list tbody tr').length === 3`, "the third pass, live")
	tb.waitJS(`document.querySelectorAll('#account-events li[data-kind="account.done"]').length === 3`, "the third run's account.done, live")
	// The badge follows the account's record, which the page reads again
	// after the event: it may come a moment later.
	tb.waitJS(`document.querySelector('#account-summary .badge').textContent === 'completed'`, "alice's badge completed after the third pass")
}

// testAuthorizeAccount: an account of a side that takes refresh tokens
// has an Authorize button; it shows the provider's page and the code, and
// the page says when the user's sign-in stored the token.
func testAuthorizeAccount(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	tokens := imaptest.StartTokenServer(t, imaptest.TokenServerOptions{})
	tokens.AddClient("public-app", "")
	src := s.createEndpoint(t, api.EndpointInput{Host: "outlook.office365.com", TlsMode: api.TLSModeSsl, Auth: &api.EndpointAuthInput{Method: api.AuthMethodOauth2,
		Oauth2: &api.OAuth2Input{ClientId: "public-app", TokenUrl: tokens.URL, DeviceUrl: tokens.DeviceURL, Scope: "IMAP.AccessAsUser.All offline_access"}}})
	dst := s.createEndpoint(t, api.EndpointInput{Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	task := s.createTask(t, "off Microsoft 365", src, dst)
	resp, err := s.Client.CreateAccountWithResponse(context.Background(), task, api.AccountInput{SourceLogin: "ann@example.com", DestinationPassword: "pw"})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create account: %v %v", err, resp)
	}
	tb := openTab(t, browser, s)
	// Saving the endpoint from its form keeps what the form does not
	// change, the device authorization URL too.
	tb.open(fmt.Sprintf("#/endpoints/%d", src))
	tb.waitText("#endpoint-form h2", fmt.Sprintf("Edit endpoint %d", src))
	tb.click("#endpoint-form button.primary")
	tb.waitText(".notice.ok", fmt.Sprintf("Endpoint %d saved.", src))
	tb.open(fmt.Sprintf("#/tasks/%d/accounts/%d", task, resp.JSON201.Id))
	tb.click(`button[data-action="authorize-source"]`)
	tb.waitText(".notice.ok", "Open https://microsoft.com/devicelogin, enter the code ")
	codes := tokens.PendingUserCodes()
	if len(codes) != 1 || !strings.Contains(tb.text(".notice.ok"), codes[0]) {
		t.Fatalf("pending codes %q, the page says %q", codes, tb.text(".notice.ok"))
	}
	if evaluate[bool](tb, `document.querySelector('button[data-action="authorize-destination"]') !== null`) {
		t.Errorf("a password side offers an authorization")
	}
	tokens.Approve(codes[0], "ann@example.com")
	tb.waitText(".notice.ok", "the source's refresh token is stored")
	tb.waitText("#account-events", "the source's refresh token is stored")
}

// testAuthorizeInTheBrowser: an endpoint with an authorization URL only
// authorizes in the browser. Authorize shows a sign-in link for the
// account's user; in another window the provider's page signs in and sends
// the browser back to the service, whose page says the token is stored,
// and so does the account's page, live. A sign-in whose return address did
// not load is finished by pasting that address; a sign-in under a name of
// the mailbox declared on the page is kept.
func testAuthorizeInTheBrowser(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	tokens := imaptest.StartTokenServer(t, imaptest.TokenServerOptions{})
	tokens.AddClient("web-app", "web-secret")
	src := s.createEndpoint(t, api.EndpointInput{Host: "imap.gmail.com", TlsMode: api.TLSModeSsl, Auth: &api.EndpointAuthInput{Method: api.AuthMethodOauth2,
		Oauth2: &api.OAuth2Input{ClientId: "web-app", ClientSecret: "web-secret", TokenUrl: tokens.URL, AuthorizationUrl: tokens.AuthorizationURL,
			Scope: "https://mail.google.com/"}}})
	dst := s.createEndpoint(t, api.EndpointInput{Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	task := s.createTask(t, "off Google Workspace", src, dst)
	account := s.createAccount(t, task, api.AccountInput{SourceLogin: "ann@example.com", DestinationPassword: "pw"})
	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/endpoints/%d", src))
	if got := evaluate[string](tb, `document.querySelector('input[name="oauth2_authorization_url"]').value`); got != tokens.AuthorizationURL {
		t.Errorf("the endpoint form's authorization endpoint says %q", got)
	}
	tb.open(fmt.Sprintf("#/tasks/%d/accounts/%d", task, account))
	tb.click(`button[data-action="authorize-source"]`)
	tb.waitText(".notice.ok", "before")
	signIn := evaluate[string](tb, `document.querySelector('#sign-in').href`)
	if got := tb.text("#sign-in"); got != "Sign in as ann@example.com" || !strings.HasPrefix(signIn, tokens.AuthorizationURL+"?") {
		t.Fatalf("the sign-in link %q goes to %s", got, signIn)
	}
	tb.screenshot("authorize-in-the-browser")

	other := openTab(t, browser, s)
	other.run(chromedp.Navigate(signIn), chromedp.WaitVisible(chromedp.CSS(`button[value="accept"]`)))
	if got := evaluate[string](other, `document.querySelector('input[name="user"]').value`); got != "ann@example.com" {
		t.Errorf("the provider's page asks %q to sign in", got)
	}
	other.click(`button[value="accept"]`)
	// Two navigations (the provider's answer, then the service's page):
	// WaitVisible follows them, a poll would lose its page.
	other.run(chromedp.WaitVisible(chromedp.CSS("#outcome")))
	other.waitText("#outcome", "ann@example.com: the source's refresh token is stored. You can close this window.")
	tb.waitText(".notice.ok", "ann@example.com: the source's refresh token is stored")
	tb.waitText("#account-events", "the source's refresh token is stored")

	// The return address pasted, of a sign-in under another name of the
	// mailbox, declared.
	tb.fill(map[string]string{"#also-accept": "ann@tenant.example"})
	tb.click(`button[data-action="authorize-source"]`)
	tb.waitJS(`document.querySelector('#sign-in') !== null`, "a new sign-in link")
	back := tokens.SignIn(t, evaluate[string](tb, `document.querySelector('#sign-in').href`), "ann@tenant.example", true)
	tb.fill(map[string]string{`.paste-address input[name="address"]`: back})
	tb.click(`.paste-address button`)
	tb.waitText(".notice.ok", "ann@example.com: the source's refresh token is stored; the account can log in")
	tb.waitJS(`document.querySelectorAll('#account-events li[data-kind="account.authorized"]').length === 2`, "the second account.authorized")
}

// testAlteredCopies: after the final pass found a copy that differs from
// its source message (changed on the destination's disk after the first
// pass), the account's page says so in the folder's row: how many, which
// message, and what changed.
func testAlteredCopies(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "a"}})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 5, Messages: 8}))
	src := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID := s.createTask(t, "read back", src, dst)
	alice := s.createAccount(t, taskID, api.AccountInput{SourceLogin: "alice", SourcePassword: "a"})
	if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.JSON202 == nil {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	neu.AlterStored(t, "alice", func(b []byte) []byte {
		out := []byte(string(b))
		out[strings.Index(string(out), "Subject: ")+len("Subject: ")] ^= 0x20
		return out
	})
	if resp, err := s.Client.StartFinalPassWithResponse(context.Background(), taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("final pass: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d/accounts/%d", taskID, alice))
	row := `#account-folder-list tr[data-folder="INBOX"]`
	tb.waitText(row+" .altered", "1 copy altered by the destination: there, but unlike the message sent")
	tb.waitText(row+" .altered li", "its header was rewritten (same size, other bytes)")
	tb.waitJS(`document.querySelector('`+row+`').classList.contains('failure')`, "the INBOX row with an altered copy marked as a failure")
	tb.screenshot("altered-copies")
}
