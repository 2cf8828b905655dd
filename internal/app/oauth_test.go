package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// oauthTarget is a Microsoft 365 model to migrate into: an OAuth-only
// IMAP server and its tenant's token endpoint, with the service's
// application registered, and a Dovecot source whose accounts a master
// login opens.
type oauthTarget struct {
	s   *servicetest.Service
	src *imaptest.Dovecot
	// srcHost and srcPort are where the task reaches the source: the
	// Dovecot, or a proxy before it.
	srcHost string
	srcPort int
	dst     *imaptest.OAuthServer
	tokens  *imaptest.TokenServer
	logins  []string
}

func newOAuthTarget(t *testing.T, accounts, messages int, tokens imaptest.TokenServerOptions) *oauthTarget {
	return newOAuthTargetWith(t, accounts, messages, tokens, imaptest.OAuthServerOptions{})
}

func newOAuthTargetWith(t *testing.T, accounts, messages int, tokens imaptest.TokenServerOptions, server imaptest.OAuthServerOptions) *oauthTarget {
	t.Helper()
	return newOAuthTargetOf(t, servicetest.Start(t, servicetest.Options{MaxWorkers: 8}), accounts, messages, tokens, server)
}

// newOAuthTargetOf is newOAuthTargetWith on the service s.
func newOAuthTargetOf(t *testing.T, s *servicetest.Service, accounts, messages int, tokens imaptest.TokenServerOptions, server imaptest.OAuthServerOptions) *oauthTarget {
	t.Helper()
	o := &oauthTarget{s: s, tokens: imaptest.StartTokenServer(t, tokens)}
	o.tokens.AddClient("mailmigrate-app", "app-secret")
	users := map[string]string{}
	for i := range accounts {
		login := fmt.Sprintf("user%03d@example.com", i)
		users[login] = "unknown-" + login
		o.logins = append(o.logins, login)
	}
	o.src = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, MasterUsers: map[string]string{"admin": "master-pw"}})
	for _, login := range o.logins {
		o.src.WriteInbox(t, login, messages, func(i int) []byte {
			return fmt.Appendf(nil, "From: a@example.com\r\nSubject: %s %d\r\nMessage-ID: <%d.%s>\r\n\r\nbody\r\n", login, i, i, login)
		})
	}
	o.srcHost, o.srcPort = o.src.Host, o.src.Port
	server.Users = o.logins
	o.dst = imaptest.StartOAuthServer(t, o.tokens, server)
	return o
}

// onlyAccount is the task's one account, as the API lists it.
func (o *oauthTarget) onlyAccount(t *testing.T, taskID int64) api.Account {
	t.Helper()
	page, err := o.s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
	if err != nil || page.JSON200 == nil || len(*page.JSON200) != 1 {
		t.Fatalf("accounts: %v %v", err, page)
	}
	return (*page.JSON200)[0]
}

// task creates the task from the master-login source to an OAuth 2.0
// destination with oauth2 settings.
func (o *oauthTarget) task(t *testing.T, oauth2 api.OAuth2Input) int64 {
	t.Helper()
	src := createMasterEndpoint(t, o.s, o.srcHost, o.srcPort, api.EndpointAuthInput{Method: api.AuthMethodMaster, MasterLogin: "admin", MasterPassword: "master-pw"})
	oauth2.TokenUrl, oauth2.ClientId = o.tokens.URL, "mailmigrate-app"
	resp, err := o.s.Client.CreateEndpointWithResponse(context.Background(), api.EndpointInput{Host: o.dst.Host, Port: o.dst.Port, TlsMode: api.TLSModePlain,
		Auth: &api.EndpointAuthInput{Method: api.AuthMethodOauth2, Oauth2: &oauth2}})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create the OAuth 2.0 endpoint: %v %v", err, resp)
	}
	return createTask(t, o.s, src, resp.JSON201.Id, `{"parallel_accounts": 16}`)
}

func (o *oauthTarget) run(t *testing.T, taskID int64, want api.TaskState) api.Task {
	t.Helper()
	if resp, err := o.s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	task := servicetest.WaitTask(t, o.s.Client, taskID, func(task api.Task) error {
		if task.State == want || task.State == api.TaskStateFailed {
			return nil
		}
		return fmt.Errorf("task %d is %s, want %s", taskID, task.State, want)
	})
	if task.State != want {
		page, _ := o.s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
		for _, a := range *page.JSON200 {
			t.Logf("%s: %s %s", a.SourceLogin, a.State, a.LastError)
		}
		t.Fatalf("task %d is %s, want %s", taskID, task.State, want)
	}
	return task
}

// runLoginsAlone imports the task's accounts as logins alone, runs it,
// and checks that every account completed with each of its messages.
func (o *oauthTarget) runLoginsAlone(t *testing.T, taskID int64, messages int) {
	t.Helper()
	importAccounts(t, o.s, taskID, "source_login\n"+strings.Join(o.logins, "\n")+"\n")
	task := o.run(t, taskID, api.TaskStateCompleted)
	if int(task.Accounts.Completed) != len(o.logins) {
		t.Errorf("accounts: %+v, want all %d completed", task.Accounts, len(o.logins))
	}
	for _, login := range o.logins {
		if n := o.dst.Count(t, login, "INBOX"); n != messages {
			t.Errorf("%s's INBOX on the destination holds %d messages, want %d", login, n, messages)
		}
	}
}

// TestThreeHundredAccountsWithAppOnlyOAuth2: Microsoft 365's app-only
// access: one application's client credentials log every account in, the
// accounts imported as logins alone (a master login opens the source).
// All 300 complete with every message, on a handful of tokens.
func TestThreeHundredAccountsWithAppOnlyOAuth2(t *testing.T) {
	t.Parallel()
	const accounts, messages = 300, 2
	o := newOAuthTarget(t, accounts, messages, imaptest.TokenServerOptions{})
	taskID := o.task(t, api.OAuth2Input{Grant: api.OAuth2GrantClientCredentials, ClientSecret: "app-secret"})
	o.runLoginsAlone(t, taskID, messages)
	if n := o.tokens.Issued("client_credentials"); n < 1 || n > 3 {
		t.Errorf("%d application tokens for %d accounts, want the one shared", n, accounts)
	}
}

// TestRefreshTokensPerAccount: each account brings its user's refresh
// token (CSV column destination_refresh_token). The authorization server
// rotates them and revokes each one used, so a second run works only if
// the first stored the new tokens. An account whose token the server
// refuses fails with words saying what to do; the others complete.
func TestRefreshTokensPerAccount(t *testing.T) {
	t.Parallel()
	o := newOAuthTarget(t, 3, 2, imaptest.TokenServerOptions{Rotate: true})
	taskID := o.task(t, api.OAuth2Input{Grant: api.OAuth2GrantRefreshToken, Mechanism: api.TokenMechanismOauthbearer, ClientSecret: "app-secret"})
	csv := "source_login,destination_refresh_token\n"
	for _, login := range o.logins[:2] {
		csv += login + "," + o.tokens.IssueRefreshToken(login, "mailmigrate-app") + "\n"
	}
	csv += o.logins[2] + ",a-token-revoked-long-ago\n"
	importAccounts(t, o.s, taskID, csv)

	for pass := 1; pass <= 2; pass++ {
		task := o.run(t, taskID, api.TaskStateCompletedWithErrors)
		if task.Accounts.Completed != 2 || task.Accounts.Failed != 1 {
			t.Fatalf("pass %d: accounts %+v, want 2 completed and 1 failed", pass, task.Accounts)
		}
	}
	for _, login := range o.logins[:2] {
		if n := o.dst.Count(t, login, "INBOX"); n != 2 {
			t.Errorf("%s's INBOX holds %d messages after two passes, want 2", login, n)
		}
	}
	page, err := o.s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
	if err != nil || page.JSON200 == nil {
		t.Fatalf("accounts: %v %v", err, page)
	}
	for _, a := range *page.JSON200 {
		if a.SourceLogin == o.logins[2] && (!strings.Contains(a.LastError, "the user must authorize again") || !strings.Contains(a.LastError, "refresh token")) {
			t.Errorf("the account with a refused token failed with %q", a.LastError)
		}
	}
}

// TestThrottledMidFolderCompletesExact: the Microsoft 365 model throttles
// three APPENDs in the middle of the INBOX (a suggested backoff, then the
// session ends). The account pauses each time, says so in an
// account.throttled event with the server's words, and completes with
// every message once; no account fails.
func TestThrottledMidFolderCompletesExact(t *testing.T) {
	t.Parallel()
	const messages = 30
	o := newOAuthTargetWith(t, 1, messages, imaptest.TokenServerOptions{},
		imaptest.OAuthServerOptions{ThrottleAppends: []int{3, 9, 20}, Backoff: 300 * time.Millisecond})
	taskID := o.task(t, api.OAuth2Input{Grant: api.OAuth2GrantClientCredentials, ClientSecret: "app-secret"})
	importAccounts(t, o.s, taskID, o.logins[0]+"\n")
	task := o.run(t, taskID, api.TaskStateCompleted)
	if task.Accounts.Completed != 1 || task.Accounts.Failed != 0 {
		t.Errorf("accounts: %+v", task.Accounts)
	}
	if n := o.dst.Count(t, o.logins[0], "INBOX"); n != messages {
		t.Errorf("the INBOX holds %d messages, want %d", n, messages)
	}
	page, err := o.s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
	if err != nil || page.JSON200 == nil || len(*page.JSON200) != 1 || (*page.JSON200)[0].PausedUntil != nil {
		t.Errorf("the completed account: %v %+v, want no pause left", err, page)
	}
	var throttled []api.Event
	for _, e := range taskEvents(t, o.s, taskID) {
		if e.Kind == api.EventKindAccountThrottled {
			throttled = append(throttled, e)
		}
	}
	if len(throttled) != 3 {
		t.Fatalf("%d account.throttled events, want 3", len(throttled))
	}
	for _, e := range throttled {
		if e.Error != "Request is throttled. Suggested Backoff Time: 300 milliseconds" || e.Side != "destination" ||
			!strings.Contains(e.Message, "asks to slow down") || !strings.Contains(e.Message, "paused until") {
			t.Errorf("event %+v", e)
		}
	}
}

// TestPushbackThroughTheService: each server's way of asking to slow
// down, answered to an APPEND through the real service, pauses the account
// with an account.throttled event in the server's words, and the account
// completes with every message, no failure. (A [LIMIT] about the message
// itself stays a refusal: TestPushbackIsPushback, in the engine, since
// this server ends the session after any such answer.)
func TestPushbackThroughTheService(t *testing.T) {
	t.Parallel()
	const messages = 6
	for _, tc := range []struct {
		name   string
		answer *imap.Error
		bye    bool
	}{
		{"limit, slow down", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeLimit, Text: "Too many commands, slow down"}, false},
		{"throttled", &imap.Error{Type: imap.StatusResponseTypeNo, Code: "THROTTLED", Text: "Request rate exceeded"}, false},
		{"unavailable", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeUnavailable, Text: "Backend temporarily unavailable"}, false},
		{"in use", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeInUse, Text: "Mailbox locked by another session"}, false},
		{"bye, unavailable", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeUnavailable, Text: "Too many sessions, come back later"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := servicetest.Start(t, servicetest.Options{Workers: worker.Options{Tuning: transfer.Tuning{ThrottlePause: 200 * time.Millisecond}}})
			o := newOAuthTargetOf(t, s, 1, messages, imaptest.TokenServerOptions{},
				imaptest.OAuthServerOptions{ThrottleAppends: []int{3}, ThrottleAnswer: tc.answer, ThrottleBye: tc.bye})
			taskID := o.task(t, api.OAuth2Input{Grant: api.OAuth2GrantClientCredentials, ClientSecret: "app-secret"})
			importAccounts(t, o.s, taskID, o.logins[0]+"\n")
			task := o.run(t, taskID, api.TaskStateCompleted)
			if n := o.dst.Count(t, o.logins[0], "INBOX"); n != messages || task.Accounts.Failed != 0 {
				t.Errorf("the INBOX holds %d messages, want %d; accounts %+v", n, messages, task.Accounts)
			}
			var throttled []api.Event
			for _, e := range taskEvents(t, o.s, taskID) {
				if e.Kind == api.EventKindAccountThrottled {
					throttled = append(throttled, e)
				}
			}
			account := waitAccount(t, o.s, taskID, o.logins[0], func(api.Account) bool { return true })
			if len(throttled) != 1 || throttled[0].Error != tc.answer.Text || throttled[0].Side != "destination" || !strings.Contains(throttled[0].Message, "paused until") {
				t.Errorf("account.throttled events %+v; want one, in the server's words, saying until when", throttled)
			}
			if account.State != api.AccountStateCompleted || account.LastError != "" {
				t.Errorf("the account is %s (%q); pushback is no failure", account.State, account.LastError)
			}
		})
	}
}

// TestDeviceAuthorizationGivesTheAccountItsToken: an account imported
// without a refresh token cannot log in, and says how to get one; a
// device authorization started through the API, approved on the
// provider's side, stores the user's refresh token (an account.authorized
// event), and the account then migrates.
func TestDeviceAuthorizationGivesTheAccountItsToken(t *testing.T) {
	t.Parallel()
	o := newOAuthTarget(t, 1, 2, imaptest.TokenServerOptions{})
	taskID := o.task(t, api.OAuth2Input{ClientSecret: "app-secret", DeviceUrl: o.tokens.DeviceURL})
	importAccounts(t, o.s, taskID, o.logins[0]+"\n")
	task := o.run(t, taskID, api.TaskStateFailed)
	account := o.onlyAccount(t, taskID)
	if !strings.Contains(account.LastError, "no refresh token is stored for this account: authorize it") {
		t.Errorf("an account without a refresh token failed with %q (task %s)", account.LastError, task.State)
	}

	resp, err := o.s.Client.AuthorizeAccountWithResponse(context.Background(), taskID, account.Id, api.AuthorizationInput{Side: api.AuthorizationInputSideDestination})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("authorize: %v %v", err, resp)
	}
	if da := resp.JSON200; da.UserCode == "" || da.VerificationUri == "" || time.Until(da.ExpiresAt) < time.Minute {
		t.Errorf("device authorization %+v", da)
	}
	if !o.tokens.Approve(resp.JSON200.UserCode, o.logins[0]) {
		t.Fatalf("the token server knows no user code %q", resp.JSON200.UserCode)
	}
	servicetest.WaitTask(t, o.s.Client, taskID, func(api.Task) error {
		for _, e := range taskEvents(t, o.s, taskID) {
			if e.Kind == api.EventKindAccountAuthorized && e.AccountId == account.Id && e.Side == "destination" {
				return nil
			}
		}
		return fmt.Errorf("no account.authorized event yet")
	})
	o.run(t, taskID, api.TaskStateCompleted)
	if n := o.dst.Count(t, o.logins[0], "INBOX"); n != 2 {
		t.Errorf("the INBOX holds %d messages, want 2", n)
	}

	wrong, err := o.s.Client.AuthorizeAccountWithBodyWithResponse(context.Background(), taskID, account.Id, "application/json", strings.NewReader(`{"side":"source"}`))
	if err != nil || wrong.StatusCode() != http.StatusBadRequest || !strings.Contains(string(wrong.Body), "the source endpoint takes no refresh tokens") {
		t.Errorf("authorizing a side without refresh tokens: %v %d %s", err, wrong.StatusCode(), wrong.Body)
	}
}

// TestThrottledAccountShowsPausedUntil: while a throttled account waits,
// the API says until when; once it goes on and ends, the pause is gone.
func TestThrottledAccountShowsPausedUntil(t *testing.T) {
	t.Parallel()
	const backoff = 3 * time.Second
	o := newOAuthTargetWith(t, 1, 5, imaptest.TokenServerOptions{}, imaptest.OAuthServerOptions{ThrottleAppends: []int{2}, Backoff: backoff})
	taskID := o.task(t, api.OAuth2Input{Grant: api.OAuth2GrantClientCredentials, ClientSecret: "app-secret"})
	importAccounts(t, o.s, taskID, o.logins[0]+"\n")
	started := time.Now()
	if resp, err := o.s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	account := func() api.Account { return o.onlyAccount(t, taskID) }
	servicetest.WaitTask(t, o.s.Client, taskID, func(api.Task) error {
		if a := account(); a.PausedUntil == nil {
			return fmt.Errorf("account %s, not paused", a.State)
		}
		return nil
	})
	if until := *account().PausedUntil; until.Before(started.Add(backoff)) || until.After(time.Now().Add(backoff)) {
		t.Errorf("paused until %s, want about %s after the throttle", until, backoff)
	}
	servicetest.WaitTaskState(t, o.s.Client, taskID, api.TaskStateCompleted)
	if a := account(); a.PausedUntil != nil || a.State != api.AccountStateCompleted {
		t.Errorf("after the run: %s, paused until %v", a.State, a.PausedUntil)
	}
}

// TestTokenExpiringMidRunThroughTheService: tokens live two seconds, the
// destination ends a session whose token expired, and a slow source makes
// the copy itself last longer: the service's run logs in again with a
// refreshed token and completes, every message once, with no failure.
func TestTokenExpiringMidRunThroughTheService(t *testing.T) {
	t.Parallel()
	const messages = 40
	o := newOAuthTargetWith(t, 1, 0, imaptest.TokenServerOptions{Lifetime: 2 * time.Second}, imaptest.OAuthServerOptions{})
	o.src.WriteInbox(t, o.logins[0], messages, func(i int) []byte { // 12 kB: 3 s of copying
		return fmt.Appendf(nil, "From: a@example.com\r\nSubject: %d\r\nMessage-ID: <%d.x>\r\n\r\n%s\r\n", i, i, strings.Repeat("body ", 60))
	})
	o.srcHost, o.srcPort = imaptest.SlowProxy(t, o.src.Addr(), 4_000)
	taskID := o.task(t, api.OAuth2Input{ClientSecret: "app-secret"})
	importAccounts(t, o.s, taskID, "source_login,destination_refresh_token\n"+o.logins[0]+","+o.tokens.IssueRefreshToken(o.logins[0], "mailmigrate-app")+"\n")
	started := time.Now()
	task := o.run(t, taskID, api.TaskStateCompleted)
	if took := time.Since(started); took < 3*time.Second {
		t.Fatalf("the run took %s, less than a token's life: nothing was proven", took)
	}
	if task.Accounts.Completed != 1 || task.Totals.MessagesFailed != 0 {
		t.Errorf("accounts %+v, totals %+v", task.Accounts, task.Totals)
	}
	if n := o.dst.Count(t, o.logins[0], "INBOX"); n != messages {
		t.Errorf("the INBOX holds %d messages, want %d", n, messages)
	}
	if o.dst.Invalidated() == 0 || o.tokens.Issued("refresh_token") < 2 {
		t.Errorf("%d sessions outlived their token and %d tokens were issued: the refresh was not needed", o.dst.Invalidated(), o.tokens.Issued("refresh_token"))
	}
}

// TestGoogleServiceAccountThroughTheService: an endpoint whose accounts
// log in as a Google service account with domain-wide delegation (its JSON
// key file as the client secret, as the Cloud console writes it); the
// accounts are imported as logins alone and each gets its own token by a
// signed JWT naming it. All complete with every message.
func TestGoogleServiceAccountThroughTheService(t *testing.T) {
	t.Parallel()
	const accounts, messages = 3, 2
	o := newOAuthTarget(t, accounts, messages, imaptest.TokenServerOptions{})
	key := o.tokens.AddServiceAccount(t, "migrator@acme.iam.gserviceaccount.com", true)
	taskID := o.task(t, api.OAuth2Input{Grant: api.OAuth2GrantServiceAccount, ClientSecret: string(key)})
	o.runLoginsAlone(t, taskID, messages)
	if n := o.tokens.Issued("urn:ietf:params:oauth:grant-type:jwt-bearer"); n < accounts {
		t.Errorf("%d tokens from signed assertions for %d accounts, want one each at least", n, accounts)
	}
	endpoints, err := o.s.Client.ListEndpointsWithResponse(context.Background())
	if err != nil || endpoints.JSON200 == nil {
		t.Fatalf("endpoints: %v", err)
	}
	for _, e := range *endpoints.JSON200 {
		if e.Auth.Oauth2 != nil && e.Auth.Oauth2.Grant == api.OAuth2GrantServiceAccount && !e.Auth.Oauth2.ClientSecretSet {
			t.Errorf("the service account endpoint shows no stored key: %+v", e.Auth.Oauth2)
		}
	}
}

// TestBrowserAuthorizationGivesTheAccountItsToken: an endpoint with an
// authorization URL and no device URL authorizes in the browser: the
// answer is the provider's sign-in address for the account's user; the
// provider sends the browser back to the service's own callback, which
// stores the refresh token, and the account then migrates. The address
// is good once; a declined sign-in handed to POST /authorizations/complete
// is a 400 in words and an error event.
func TestBrowserAuthorizationGivesTheAccountItsToken(t *testing.T) {
	t.Parallel()
	o := newOAuthTarget(t, 1, 2, imaptest.TokenServerOptions{})
	taskID := o.task(t, api.OAuth2Input{ClientSecret: "app-secret", AuthorizationUrl: o.tokens.AuthorizationURL})
	importAccounts(t, o.s, taskID, o.logins[0]+"\n")
	account := o.onlyAccount(t, taskID)
	ctx := context.Background()

	noRedirect, err := o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id, api.AuthorizationInput{Side: api.AuthorizationInputSideDestination})
	if err != nil || noRedirect.StatusCode() != http.StatusBadRequest || string(noRedirect.Body) != "redirect_uri must be given for the browser flow" {
		t.Errorf("a browser flow without a redirect URI: %v %d %s", err, noRedirect.StatusCode(), noRedirect.Body)
	}
	callback := o.s.URL + httpapi.CallbackPath
	resp, err := o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id,
		api.AuthorizationInput{Side: api.AuthorizationInputSideDestination, RedirectUri: callback})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("authorize: %v %v", err, resp)
	}
	started := resp.JSON200
	signIn, err := url.Parse(started.AuthorizationUrl)
	if err != nil || started.Flow != api.AuthorizationFlowBrowser || started.UserCode != "" || time.Until(started.ExpiresAt) < 9*time.Minute ||
		signIn.Query().Get("login_hint") != o.logins[0] || signIn.Query().Get("redirect_uri") != callback ||
		signIn.Query().Get("code_challenge_method") != "S256" || signIn.Query().Get("state") == "" {
		t.Fatalf("browser authorization %+v", started)
	}
	back := o.tokens.SignIn(t, started.AuthorizationUrl, o.logins[0], true)
	if !strings.HasPrefix(back, callback+"?") {
		t.Fatalf("the provider sent the browser to %s", back)
	}
	status, body := testsupport.GetPage(t, back)
	if status != http.StatusOK || !strings.Contains(body, o.logins[0]+": the destination&#39;s refresh token is stored. You can close this window.") {
		t.Errorf("the callback page: %d %s", status, body)
	}
	if status, body := testsupport.GetPage(t, back); status != http.StatusBadRequest || !strings.Contains(body, "names no authorization under way") {
		t.Errorf("the same address again: %d %s", status, body)
	}
	if !hasEvent(taskEvents(t, o.s, taskID), api.EventKindAccountAuthorized, account.Id, "destination") {
		t.Errorf("no account.authorized event")
	}
	o.run(t, taskID, api.TaskStateCompleted)
	if n := o.dst.Count(t, o.logins[0], "INBOX"); n != 2 {
		t.Errorf("the INBOX holds %d messages, want 2", n)
	}

	// Declined: the address goes to the API, as the CLI and a pasted
	// address do.
	browserFlow := api.AuthorizationFlowBrowser
	resp, err = o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id,
		api.AuthorizationInput{Side: api.AuthorizationInputSideDestination, Flow: &browserFlow, RedirectUri: "http://127.0.0.1:1/"})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("authorize again: %v %v", err, resp)
	}
	declined := o.tokens.SignIn(t, resp.JSON200.AuthorizationUrl, o.logins[0], false)
	done, err := o.s.Client.CompleteAuthorizationWithResponse(ctx, api.AuthorizationAddress{Address: declined})
	if err != nil || done.StatusCode() != http.StatusBadRequest ||
		!strings.Contains(string(done.Body), "authorization ended without a token: the provider answered access_denied (AADSTS65004: User declined") {
		t.Errorf("a declined sign-in: %v %d %s", err, done.StatusCode(), done.Body)
	}
	if !hasEvent(taskEvents(t, o.s, taskID), api.EventKindError, account.Id, "destination") {
		t.Errorf("no error event for the declined sign-in")
	}
	if done, err := o.s.Client.CompleteAuthorizationWithResponse(ctx, api.AuthorizationAddress{Address: "http://127.0.0.1:1/?code=x"}); err != nil ||
		done.StatusCode() != http.StatusBadRequest || !strings.Contains(string(done.Body), "address carries no state") {
		t.Errorf("an address without a state: %v %d %s", err, done.StatusCode(), done.Body)
	}
}

// hasEvent reports whether events hold one of kind for the account's side.
func hasEvent(events []api.Event, kind api.EventKind, accountID int64, side string) bool {
	for _, e := range events {
		if e.Kind == kind && e.AccountId == accountID && e.Side == side {
			return true
		}
	}
	return false
}
