package web_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// testEndpoints adds an endpoint through the form, edits it, and tries to
// delete one that a task uses: cancel keeps it, confirm shows the 409.
func testEndpoints(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	tb := openTab(t, browser, s)
	tb.open("#/endpoints")
	tb.waitText("main", "No endpoint yet")

	tb.fill(map[string]string{
		"#endpoint-form [name=role_label]": "old provider",
		"#endpoint-form [name=host]":       "imap.old.example",
		"#endpoint-form [name=tls_mode]":   "ssl",
	})
	tb.click("#endpoint-form button.primary")
	tb.waitText("#endpoint-list", "imap.old.example")
	if got := tb.text(`#endpoint-list tbody tr:first-child`); !strings.Contains(got, "993") || strings.Contains(got, "unsafe") {
		t.Errorf("new endpoint row %q, want the default port 993 and no unsafe mark", got)
	}

	// Edit: the form comes back filled in; the change shows on the list.
	id := firstRowID(tb, "#endpoint-list")
	tb.click(`#endpoint-list a[href="#/endpoints/` + id + `"]`)
	tb.waitText("#endpoint-form h2", "Edit endpoint "+id)
	if host := evaluate[string](tb, `document.querySelector('#endpoint-form [name=host]').value`); host != "imap.old.example" {
		t.Errorf("edit form host %q", host)
	}
	tb.fill(map[string]string{
		"#endpoint-form [name=host]":     "mail.new.example",
		"#endpoint-form [name=port]":     "143",
		"#endpoint-form [name=tls_mode]": "starttls",
	})
	tb.click("#endpoint-skip-verify")
	// Limits of its own, in MB; the others stay the provider's.
	tb.click("#endpoint-form details.limits summary")
	tb.fill(map[string]string{
		"#endpoint-form [name=daily_upload_mb]": "500",
		"#endpoint-form [name=connections]":     "4",
	})
	tb.click("#endpoint-form button.primary")
	tb.waitText(".notice.ok", "Endpoint "+id+" saved.")
	epID, _ := strconv.ParseInt(id, 10, 64)
	if got, err := s.Client.GetEndpointWithResponse(context.Background(), epID); err != nil || got.JSON200 == nil ||
		got.JSON200.Limits != (api.EndpointLimits{DailyUploadBytes: 500000000, Connections: 4}) {
		t.Errorf("the endpoint's limits after the form: %v %+v", err, got)
	}
	tb.waitText("#endpoint-list", "mail.new.example")
	row := tb.text(`#endpoint-list tr[data-id="` + id + `"]`)
	for _, want := range []string{"mail.new.example", "143", "starttls", "unsafe: certificate not checked"} {
		if !strings.Contains(row, want) {
			t.Errorf("edited row %q lacks %q", row, want)
		}
	}
	tb.screenshot("endpoints")

	// A task uses it: the service refuses, and the page says why.
	s.createTask(t, "uses it", epID, s.createEndpoint(t, api.EndpointInput{RoleLabel: "new", Host: "imap.new.example", TlsMode: api.TLSModeSsl}))
	tb.click(`#endpoint-list tr[data-id="` + id + `"] button.danger`)
	tb.confirm("Delete endpoint old provider (mail.new.example:143)?", true)
	tb.waitText(".notice.error", "Endpoint old provider (mail.new.example:143) was not deleted: endpoint is used by 1 task.")
	tb.waitText(`#endpoint-list tr[data-id="`+id+`"]`, "mail.new.example")
	tb.screenshot("endpoint-in-use")

	// An unused one stays when the dialog is canceled, and goes once confirmed.
	unused := s.createEndpoint(t, api.EndpointInput{RoleLabel: "spare", Host: "spare.example", TlsMode: api.TLSModeSsl})
	tb.open("#/endpoints")
	spareDelete := fmt.Sprintf(`#endpoint-list tr[data-id="%d"] button.danger`, unused)
	tb.click(spareDelete)
	tb.confirm("Delete endpoint spare (spare.example:993)?", false)
	// Closed, the dialog gives the focus back to the button that opened it;
	// Esc does too, to the button that stands for it after a redraw.
	tb.waitJS(`document.activeElement === document.querySelector(`+quote(spareDelete)+`)`, "the focus back on Delete")
	tb.click(spareDelete)
	tb.waitText("dialog[open] #confirm-question", "Delete endpoint spare")
	// A live redraw replaces the row's button while the dialog is open.
	evaluate[bool](tb, `(() => { const b = document.querySelector(`+quote(spareDelete)+`); b.replaceWith(b.cloneNode(true)); return true; })()`)
	tb.run(chromedp.KeyEvent(kb.Escape))
	tb.waitJS(`document.querySelector('dialog[open]') === null && document.activeElement === document.querySelector(`+quote(spareDelete)+`)`,
		"Esc to close the dialog and give the focus back to Delete")
	tb.open("#/endpoints") // a DELETE sent anyway would have landed by now
	tb.waitText(fmt.Sprintf(`#endpoint-list tr[data-id="%d"]`, unused), "spare.example")
	tb.click(spareDelete)
	tb.confirm("Delete endpoint spare (spare.example:993)?", true)
	tb.waitText(".notice.ok", "Endpoint spare (spare.example:993) deleted.")
	tb.waitJS(fmt.Sprintf(`document.querySelector('#endpoint-list tr[data-id="%d"]') === null`, unused), "the deleted row to go")
}

func firstRowID(tb *tab, table string) string {
	tb.t.Helper()
	return evaluate[string](tb, `document.querySelector(`+quote(table+" tbody tr")+`).dataset.id`)
}

// testEndpointCheck: "Test connection" checks the server as the form holds
// it, before it is saved: a self-signed server is named with the way out,
// which then works.
func testEndpointCheck(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash})
	tb := openTab(t, browser, s)
	tb.open("#/endpoints")
	tb.fill(map[string]string{
		"#endpoint-form [name=host]":     d.Host,
		"#endpoint-form [name=port]":     fmt.Sprint(d.TLSPort),
		"#endpoint-form [name=tls_mode]": "ssl",
	})
	tb.click(`#endpoint-form button[data-action="check"]`)
	tb.waitText("#endpoint-check", "is not signed by an authority this machine trusts")
	tb.waitText("#endpoint-check .advice", `tick "Accept any certificate"`)
	tb.screenshot("endpoint-check-self-signed")
	tb.click("#endpoint-skip-verify")
	tb.click(`#endpoint-form button[data-action="check"]`)
	tb.waitText("#endpoint-check", d.TLSAddr()+" works as configured")
	tb.waitText("#endpoint-check", "not trusted")
	if text := tb.text("#endpoint-check"); strings.Contains(text, "null") {
		t.Errorf("the check's words hold a literal null: %q", text)
	}
	if n := evaluate[int](tb, `document.querySelectorAll('#endpoint-list tr').length`); n != 0 {
		t.Errorf("the check saved an endpoint: %d rows", n)
	}
}

// testMasterLogin: the endpoint form takes a master login, never shows its
// password back and keeps it when left empty; the task page then says an
// account needs no password on that side, and adds one without.
func testMasterLogin(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	tb := openTab(t, browser, s)
	tb.open("#/endpoints")
	if evaluate[bool](tb, `!document.querySelector('#endpoint-form fieldset.master-login').hidden`) {
		t.Errorf("the master login's fields show before the master method is chosen")
	}
	tb.choose("#endpoint-form [name=auth_method]", "master")
	tb.fill(map[string]string{
		"#endpoint-form [name=host]":            "imap.old.example",
		"#endpoint-form [name=master_login]":    "admin",
		"#endpoint-form [name=master_password]": "Master-pw-1",
		"#endpoint-form [name=master_form]":     "separator",
	})
	tb.screenshot("endpoint-form-master")
	tb.click("#endpoint-form button.primary")
	tb.waitText("#endpoint-list", "master login admin")
	id := firstRowID(tb, "#endpoint-list")

	tb.click(`#endpoint-list a[href="#/endpoints/` + id + `"]`)
	tb.waitText("#endpoint-form h2", "Edit endpoint "+id)
	form := evaluate[map[string]string](tb, `(() => { const f = document.querySelector('#endpoint-form');
		return { method: f.auth_method.value, login: f.master_login.value, password: f.master_password.value,
			placeholder: f.master_password.placeholder, form: f.master_form.value }; })()`)
	want := map[string]string{"method": "master", "login": "admin", "password": "", "placeholder": "unchanged", "form": "separator"}
	if fmt.Sprint(form) != fmt.Sprint(want) {
		t.Errorf("the edit form holds %v, want %v", form, want)
	}
	tb.fill(map[string]string{"#endpoint-form [name=master_login]": "root"})
	tb.click("#endpoint-form button.primary")
	tb.waitText(".notice.ok", "Endpoint "+id+" saved.")
	epID, _ := strconv.ParseInt(id, 10, 64)
	resp, err := s.Client.GetEndpointWithResponse(context.Background(), epID)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("get endpoint: %v %v", err, resp)
	}
	if a := resp.JSON200.Auth; a != (api.EndpointAuth{Method: api.AuthMethodMaster, MasterLogin: "root", MasterForm: api.MasterFormSeparator, MasterPasswordSet: true}) {
		t.Errorf("after saving with the password left empty: %+v", a)
	}
	tb.screenshot("endpoint-master-login")

	dst := s.createEndpoint(t, api.EndpointInput{Host: "imap.new.example", TlsMode: api.TLSModeSsl,
		Auth: &api.EndpointAuthInput{Method: api.AuthMethodMaster, MasterLogin: "migrator", MasterPassword: "pw"}})
	task := s.createTask(t, "company", epID, dst)
	tb.open(fmt.Sprintf("#/tasks/%d", task))
	tb.waitText("#account-form", "Not needed: the master login root acts for the account.")
	tb.waitText("#account-form", "Not needed: the master login migrator acts for the account.")
	tb.fill(map[string]string{"#account-form [name=source_login]": "ann@example.com"})
	tb.click("#account-form button.primary")
	tb.waitText("#account-form .notice.ok", "Account ann@example.com added.")
	tb.waitText("#accounts", "ann@example.com")
}

// testOAuth2Endpoint: the endpoint form takes an OAuth 2.0 application
// (Microsoft 365 app-only), never shows its secret back; a task whose
// source takes refresh tokens asks the account for one by that name.
func testOAuth2Endpoint(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	tb := openTab(t, browser, s)
	tb.open("#/endpoints")
	tb.choose("#endpoint-form [name=auth_method]", "oauth2")
	tb.choose("#endpoint-form [name=oauth2_grant]", "client_credentials")
	tb.fill(map[string]string{
		"#endpoint-form [name=host]":                 "outlook.office365.com",
		"#endpoint-form [name=oauth2_tenant]":        "contoso.onmicrosoft.com",
		"#endpoint-form [name=oauth2_client_id]":     "app-id",
		"#endpoint-form [name=oauth2_client_secret]": "Client-secret-1",
	})
	tb.screenshot("endpoint-form-oauth2")
	tb.click("#endpoint-form button.primary")
	tb.waitText("#endpoint-list", "OAuth 2.0, the application's token")
	id := firstRowID(tb, "#endpoint-list")
	tb.click(`#endpoint-list a[href="#/endpoints/` + id + `"]`)
	tb.waitText("#endpoint-form h2", "Edit endpoint "+id)
	form := evaluate[map[string]string](tb, `(() => { const f = document.querySelector('#endpoint-form');
		return { method: f.auth_method.value, grant: f.oauth2_grant.value, url: f.oauth2_token_url.value, secret: f.oauth2_client_secret.value,
			placeholder: f.oauth2_client_secret.placeholder }; })()`)
	want := map[string]string{"method": "oauth2", "grant": "client_credentials", "url": "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token",
		"secret": "", "placeholder": "unchanged"}
	if fmt.Sprint(form) != fmt.Sprint(want) {
		t.Errorf("the edit form holds %v, want %v", form, want)
	}

	src := s.createEndpoint(t, api.EndpointInput{Host: "imap.gmail.com", TlsMode: api.TLSModeSsl, Auth: &api.EndpointAuthInput{Method: api.AuthMethodOauth2,
		Oauth2: &api.OAuth2Input{Provider: api.OAuth2ProviderGoogle, ClientId: "google-app", ClientSecret: "s"}}})
	dst, _ := strconv.ParseInt(id, 10, 64)
	task := s.createTask(t, "off Gmail", src, dst)
	tb.open(fmt.Sprintf("#/tasks/%d", task))
	tb.waitText("#account-form", "Source refresh token")
	tb.waitText("#account-form", "Not needed: the endpoint's application acts for the account.")
	tb.fill(map[string]string{"#account-form [name=source_login]": "ann@example.com", "#account-form [name=source_password]": "1//0g-token"})
	tb.click("#account-form button.primary")
	tb.waitText("#account-form .notice.ok", "Account ann@example.com added.")

	// A Google service account acts for every account: none brings a token.
	domain := s.createEndpoint(t, api.EndpointInput{Host: "imap.gmail.com", TlsMode: api.TLSModeSsl, Auth: &api.EndpointAuthInput{Method: api.AuthMethodOauth2,
		Oauth2: &api.OAuth2Input{Provider: api.OAuth2ProviderGoogle, Grant: api.OAuth2GrantServiceAccount,
			ClientSecret: `{"type":"service_account","client_email":"m@acme.iam.gserviceaccount.com","private_key":"k"}`}}})
	tb.open(fmt.Sprintf("#/tasks/%d", s.createTask(t, "off Workspace", domain, dst)))
	tb.waitText("#account-form", "Not needed: the endpoint's service account acts for the account.")
}
