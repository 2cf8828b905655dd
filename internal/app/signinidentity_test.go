package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// TestTheRightPersonSignsIn: whoever holds an account's sign-in (a device
// code, a sign-in link) and signs in as someone else gets no token kept,
// by either flow: the refusal names who signed in and what to do, no
// account.authorized event is logged, and the account still has no token.
// The account's own user then signs in, and the token is kept.
func TestTheRightPersonSignsIn(t *testing.T) {
	t.Parallel()
	o, taskID, account := signInTarget(t)
	ctx := context.Background()
	const intruder = "mallory@elsewhere.example"
	refusal := "authorization kept no token: the sign-in was as " + intruder + ", not as the account's user " + o.logins[0] + "; sign in as " + o.logins[0]

	// The device flow, approved by someone else.
	deviceFlow := api.AuthorizationFlowDevice
	started, err := o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id, api.AuthorizationInput{Side: api.AuthorizationInputSideDestination, Flow: &deviceFlow})
	if err != nil || started.JSON200 == nil {
		t.Fatalf("authorize: %v %v", err, started)
	}
	if !o.tokens.Approve(started.JSON200.UserCode, intruder) {
		t.Fatalf("the token server knows no user code %q", started.JSON200.UserCode)
	}
	testsupport.Eventually(t, 30*time.Second, func() error {
		for _, e := range taskEvents(t, o.s, taskID) {
			if e.Kind == api.EventKindError && e.AccountId == account.Id && strings.Contains(e.Error, refusal) {
				return nil
			}
		}
		return errors.New("no error event refusing the device sign-in yet")
	})

	// The browser flow, signed in as someone else.
	callback := o.s.URL + httpapi.CallbackPath
	browserFlow := api.AuthorizationFlowBrowser
	resp, err := o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id,
		api.AuthorizationInput{Side: api.AuthorizationInputSideDestination, Flow: &browserFlow, RedirectUri: callback})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("authorize: %v %v", err, resp)
	}
	back := o.tokens.SignIn(t, resp.JSON200.AuthorizationUrl, intruder, true)
	if status, body := testsupport.GetPage(t, back); status != http.StatusBadRequest || !strings.Contains(body, strings.ReplaceAll(refusal, "'", "&#39;")) {
		t.Errorf("the callback page after the wrong person's sign-in: %d %s", status, body)
	}
	if hasEvent(taskEvents(t, o.s, taskID), api.EventKindAccountAuthorized, account.Id, "destination") {
		t.Fatalf("an account.authorized event after the wrong person's sign-ins")
	}
	if task := o.run(t, taskID, api.TaskStateFailed); task.Accounts.Failed != 1 {
		t.Errorf("the account ran with no token of its own: %+v", task.Accounts)
	}

	// The account's own user.
	resp, err = o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id,
		api.AuthorizationInput{Side: api.AuthorizationInputSideDestination, Flow: &browserFlow, RedirectUri: callback})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("authorize: %v %v", err, resp)
	}
	if status, body := testsupport.GetPage(t, o.tokens.SignIn(t, resp.JSON200.AuthorizationUrl, strings.ToUpper(o.logins[0]), true)); status != http.StatusOK {
		t.Fatalf("the account's own user's sign-in (its address in capitals): %d %s", status, body)
	}
	o.run(t, taskID, api.TaskStateCompleted)
	if n := o.dst.Count(t, o.logins[0], "INBOX"); n != 2 {
		t.Errorf("the INBOX holds %d messages, want 2", n)
	}

	// Both returns are in the audit trail, without their code and state.
	trail, err := o.s.Client.ListAuditWithResponse(ctx, &api.ListAuditParams{})
	if err != nil || trail.JSON200 == nil {
		t.Fatalf("audit: %v %v", err, trail)
	}
	var returns []string
	for _, e := range *trail.JSON200 {
		if e.Path == httpapi.CallbackPath {
			returns = append(returns, e.Outcome)
			if !strings.HasPrefix(e.Actor, "a sign-in's return from the provider") || e.Method != http.MethodGet {
				t.Errorf("the callback's entry: %+v", e)
			}
		}
		if strings.Contains(e.Path, "code=") || strings.Contains(e.Path, "state=") {
			t.Errorf("an entry keeps a query: %+v", e)
		}
	}
	if strings.Join(returns, ", ") != "done (200 OK), refused (400 Bad Request)" {
		t.Errorf("the callback's entries, newest first: %q", returns)
	}
}

// TestADeclaredNameSignsIn: the account's user whose provider names them
// otherwise (a tenant's own domain) is let in when whoever starts the
// authorization declares that name, by either flow; the declaration
// holds for that authorization only, and lets no one else in.
func TestADeclaredNameSignsIn(t *testing.T) {
	t.Parallel()
	o, taskID, account := signInTarget(t)
	ctx := context.Background()
	tenantName := strings.Replace(o.logins[0], "@", "@tenant.", 1)
	callback := o.s.URL + httpapi.CallbackPath
	browserFlow := api.AuthorizationFlowBrowser
	authorize := func(alsoAccept ...string) string {
		t.Helper()
		resp, err := o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id, api.AuthorizationInput{Side: api.AuthorizationInputSideDestination,
			Flow: &browserFlow, RedirectUri: callback, AlsoAccept: alsoAccept})
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("authorize: %v %v", err, resp)
		}
		return resp.JSON200.AuthorizationUrl
	}

	// Without the declaration the tenant's name is someone else.
	if status, _ := testsupport.GetPage(t, o.tokens.SignIn(t, authorize(), tenantName, true)); status != http.StatusBadRequest {
		t.Errorf("the tenant's name, undeclared: %d, want the sign-in refused", status)
	}
	// Declared, another name is still refused.
	if status, _ := testsupport.GetPage(t, o.tokens.SignIn(t, authorize(tenantName), "mallory@elsewhere.example", true)); status != http.StatusBadRequest {
		t.Errorf("someone else, with a name declared: %d, want the sign-in refused", status)
	}
	if hasEvent(taskEvents(t, o.s, taskID), api.EventKindAccountAuthorized, account.Id, "destination") {
		t.Fatal("a token kept for a name nobody declared")
	}
	// Declared, the tenant's name is the account's user.
	// (The test's IMAP server takes a token for the name it was issued
	// to alone, so the account does not run here; the provider's takes
	// it for the mailbox.)
	if status, body := testsupport.GetPage(t, o.tokens.SignIn(t, authorize(tenantName), tenantName, true)); status != http.StatusOK {
		t.Fatalf("the declared name's sign-in: %d %s", status, body)
	}
	if !hasEvent(taskEvents(t, o.s, taskID), api.EventKindAccountAuthorized, account.Id, "destination") {
		t.Fatal("no account.authorized event after the declared name's sign-in")
	}

	// The device flow takes the declaration too.
	deviceFlow := api.AuthorizationFlowDevice
	started, err := o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id, api.AuthorizationInput{Side: api.AuthorizationInputSideDestination,
		Flow: &deviceFlow, AlsoAccept: []string{tenantName}})
	if err != nil || started.JSON200 == nil {
		t.Fatalf("authorize: %v %v", err, started)
	}
	if !o.tokens.Approve(started.JSON200.UserCode, tenantName) {
		t.Fatalf("the token server knows no user code %q", started.JSON200.UserCode)
	}
	testsupport.Eventually(t, 30*time.Second, func() error {
		authorized := 0
		for _, e := range taskEvents(t, o.s, taskID) {
			if e.Kind == api.EventKindAccountAuthorized && e.AccountId == account.Id {
				authorized++
			}
		}
		if authorized < 2 {
			return errors.New("the device sign-in under the declared name is not stored yet")
		}
		return nil
	})

	tooMany := make([]string, 11)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("name%d@tenant.example", i)
	}
	if resp, err := o.s.Client.AuthorizeAccountWithResponse(ctx, taskID, account.Id, api.AuthorizationInput{Side: api.AuthorizationInputSideDestination,
		Flow: &browserFlow, RedirectUri: callback, AlsoAccept: tooMany}); err != nil || resp.StatusCode() != http.StatusBadRequest {
		t.Errorf("eleven names: %v %v, want 400", err, resp.Status())
	}
}

// signInTarget is a task of one account whose destination takes refresh
// tokens by a device or a browser sign-in, and that account.
func signInTarget(t *testing.T) (*oauthTarget, int64, api.Account) {
	t.Helper()
	o := newOAuthTarget(t, 1, 2, imaptest.TokenServerOptions{})
	taskID := o.task(t, api.OAuth2Input{ClientSecret: "app-secret", DeviceUrl: o.tokens.DeviceURL, AuthorizationUrl: o.tokens.AuthorizationURL})
	importAccounts(t, o.s, taskID, o.logins[0]+"\n")
	return o, taskID, o.onlyAccount(t, taskID)
}
