package web_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// rawWords are what a person must never read: an API field's path, or a
// script's empty value.
var rawWords = []string{"auth.", "options.", "limits.", "sieve.", "oauth2.", "null", "undefined", "[object"}

// testFormErrorsInWords walks the forms (endpoint, task, schedule,
// account) with input the service refuses: each refusal names the form's
// own fields, never an API path, and what was typed stays, the secrets
// too.
func testFormErrorsInWords(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	tb := openTab(t, browser, s)
	noRawWords := func(sel string) {
		t.Helper()
		noRawWord(t, tb, sel)
	}

	// An endpoint: a Microsoft 365 tenant with a slash in it.
	tb.open("#/endpoints")
	tb.choose("#endpoint-form [name=auth_method]", "oauth2")
	tb.choose("#endpoint-form [name=oauth2_grant]", "client_credentials")
	tb.fill(map[string]string{
		"#endpoint-form [name=host]":                 "outlook.office365.com",
		"#endpoint-form [name=oauth2_tenant]":        "contoso/evil",
		"#endpoint-form [name=oauth2_client_id]":     "app-id",
		"#endpoint-form [name=oauth2_client_secret]": "Typed-secret-1",
	})
	tb.click("#endpoint-form button.primary")
	tb.waitText("#endpoint-form .notice.error", "Not saved: Tenant must be a tenant id or domain")
	noRawWords("#endpoint-form .notice.error")
	if typed := evaluate[string](tb, `document.querySelector('#endpoint-form [name=oauth2_client_secret]').value`); typed != "Typed-secret-1" {
		t.Errorf("after the refusal the client secret field holds %q: what was typed is lost", typed)
	}
	// A token endpoint over plain http.
	tb.fill(map[string]string{"#endpoint-form [name=oauth2_tenant]": "contoso.onmicrosoft.com",
		"#endpoint-form [name=oauth2_token_url]": "http://login.example/token"})
	tb.choose("#endpoint-form [name=oauth2_provider]", "")
	tb.click("#endpoint-form button.primary")
	tb.waitText("#endpoint-form .notice.error", "Not saved: Token endpoint must be https")
	noRawWords("#endpoint-form .notice.error")

	// A task: a folder pattern that does not compile.
	src := s.createEndpoint(t, api.EndpointInput{Host: "imap.old.example", TlsMode: api.TLSModeSsl})
	dst := s.createEndpoint(t, api.EndpointInput{Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	tb.open("#/tasks")
	tb.waitJS(`document.querySelector('#task-form [name=source_endpoint_id]')?.options.length > 1`, "the endpoints in the task form")
	tb.fill(map[string]string{"#task-form [name=name]": "patterns", "#task-form [name=include_folders]": "(["})
	tb.click("#task-form details summary")
	tb.click("#task-form button.primary")
	tb.waitText("#task-form .notice.error", "Not created: Only folders matching pattern")
	noRawWords("#task-form .notice.error")
	if typed := evaluate[string](tb, `document.querySelector('#task-form [name=include_folders]').value`); typed != "([" {
		t.Errorf("after the refusal the pattern field holds %q", typed)
	}

	// A schedule of delta passes both every so often and at clock times;
	// an account whose login the task has already.
	taskID := s.createTask(t, "schedule", src, dst)
	s.createAccount(t, taskID, api.AccountInput{SourceLogin: "ann", SourcePassword: "pw"})
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.fill(map[string]string{"#schedule-form [name=every_hours]": "6", "#schedule-form [name=at]": "06:00"})
	tb.click("#schedule-form button.primary")
	tb.waitText("#cutover .notice.error", `Schedule not saved: Daily at must not be given with "Delta pass every"`)
	noRawWords("#cutover .notice.error")
	tb.fill(map[string]string{"#account-form [name=source_login]": "ann", "#account-form [name=source_password]": "pw"})
	tb.click("#account-form button.primary")
	tb.waitText("#account-form .notice.error", "Not added: ")
	noRawWords("#account-form .notice.error")
}
