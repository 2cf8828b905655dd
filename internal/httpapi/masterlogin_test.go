package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// masterServer is an endpoint whose accounts log in through one
// administrator's master login.
func masterServer(form api.MasterForm, password string) api.EndpointInput {
	in := oldServer
	in.Auth = &api.EndpointAuthInput{Method: api.AuthMethodMaster, MasterLogin: "admin", MasterPassword: password, MasterForm: form}
	return in
}

func (s *testService) endpointAuth(t *testing.T, id int64) api.EndpointAuth {
	t.Helper()
	resp, err := s.client.GetEndpointWithResponse(context.Background(), id)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("get endpoint %d: %v %v", id, err, resp)
	}
	return resp.JSON200.Auth
}

// TestEndpointMasterLogin: an endpoint keeps a master login whose password
// is written once and never shown, kept by a PUT that leaves it (or the
// whole auth) out, and forgotten when the endpoint goes back to passwords.
func TestEndpointMasterLogin(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	const masterPassword = "Master-Sekrit-42"

	plain := s.createEndpoint(t, oldServer)
	if got := s.endpointAuth(t, plain); got != passwordAuth {
		t.Errorf("an endpoint created without auth: %+v, want each account's password", got)
	}

	id := s.createEndpoint(t, masterServer("", masterPassword))
	want := api.EndpointAuth{Method: api.AuthMethodMaster, MasterLogin: "admin", MasterForm: api.MasterFormAuthzid, MasterPasswordSet: true}
	if got := s.endpointAuth(t, id); got != want {
		t.Errorf("created: %+v, want %+v", got, want)
	}
	path := fmt.Sprintf("/endpoints/%d", id)

	// A PUT by the spec's fields alone keeps the master login.
	if got := s.do(t, "PUT", path, `{"role_label":"old","host":"imap.old.example","port":993,"tls_mode":"ssl"}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT without auth: %v", got)
	}
	if got := s.endpointAuth(t, id); got != want {
		t.Errorf("after a PUT without auth: %+v, want %+v", got, want)
	}
	// One without the password keeps the stored password.
	if got := s.do(t, "PUT", path, `{"host":"imap.old.example","tls_mode":"ssl","auth":{"method":"master","master_login":"root","master_form":"separator"}}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT without the master password: %v", got)
	}
	want = api.EndpointAuth{Method: api.AuthMethodMaster, MasterLogin: "root", MasterForm: api.MasterFormSeparator, MasterPasswordSet: true}
	if got := s.endpointAuth(t, id); got != want {
		t.Errorf("after a PUT without the password: %+v, want %+v", got, want)
	}

	// Back to passwords: the master password is forgotten, so going back
	// to master needs it again.
	if got := s.do(t, "PUT", path, `{"host":"imap.old.example","tls_mode":"ssl","auth":{"method":"password"}}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT to passwords: %v", got)
	}
	if got := s.endpointAuth(t, id); got != passwordAuth {
		t.Errorf("after going back to passwords: %+v", got)
	}
	wantText(t, s.do(t, "PUT", path, `{"host":"imap.old.example","tls_mode":"ssl","auth":{"method":"master","master_login":"root"}}`),
		http.StatusBadRequest, "auth.master_password must not be empty with the master method")

	for _, tc := range []struct{ body, want string }{
		{`{"tls_mode":"ssl","auth":{"method":"master","master_login":"admin"}}`, "auth.master_password must not be empty with the master method"},
		{`{"tls_mode":"ssl","auth":{"method":"master","master_password":"x"}}`, "auth.master_login must not be empty with the master method"},
		{`{"tls_mode":"ssl","auth":{"master_login":"admin","master_password":"x"}}`, "auth.method must be password|master|oauth2"},
		{`{"tls_mode":"ssl","auth":{"method":"oauth"}}`, "auth.method must be password|master|oauth2"},
		{`{"tls_mode":"ssl","auth":{"method":"master","master_login":"a*b","master_password":"x","master_form":"separator"}}`,
			"auth.master_login must not contain * with the separator form, which joins account*master"},
	} {
		wantText(t, s.do(t, "POST", "/endpoints", tc.body), http.StatusBadRequest, tc.want)
	}

	var bodies []string
	for _, p := range []string{"/endpoints", path, fmt.Sprintf("/endpoints/%d", plain)} {
		bodies = append(bodies, s.do(t, "GET", p, "").body)
	}
	out := strings.Join(bodies, "\n") + s.logs.String()
	if strings.Contains(out, masterPassword) || strings.Contains(out, "master_password\"") {
		t.Errorf("the master password, or its field, left the service:\n%s", out)
	}
	var stored int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM endpoints WHERE position('Master-Sekrit'::bytea in master_password) > 0`).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("%d endpoints hold the master password in clear (%v)", stored, err)
	}
}

// TestAccountsOfAMasterLogin: accounts of a side with a master login need
// no password there, in the form and in a CSV file of logins alone; the
// side without one still needs its password.
func TestAccountsOfAMasterLogin(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	masterBoth := s.createTask(t, s.createEndpoint(t, masterServer(api.MasterFormAuthzid, "m1")), s.createEndpoint(t, masterServer(api.MasterFormSeparator, "m2")))
	accounts := fmt.Sprintf("/tasks/%d/accounts", masterBoth)
	if got := s.do(t, "POST", accounts, `{"source_login":"ann@example.com"}`); got.status != http.StatusCreated {
		t.Fatalf("an account without passwords under master logins: %v", got)
	}
	if got := s.do(t, "POST", accounts+"/import", "source_login\nbob@example.com\ncid@example.com\n"); got.status != http.StatusCreated || !strings.Contains(got.body, `"created":2`) {
		t.Fatalf("a file of logins alone: %v", got)
	}
	if got := s.do(t, "POST", accounts+"/import", "dan@example.com\n"); got.status != http.StatusCreated {
		t.Fatalf("a file of one column without a header: %v", got)
	}

	masterSource := s.createTask(t, s.createEndpoint(t, masterServer(api.MasterFormAuthzid, "m3")), s.createEndpoint(t, oldServer))
	accounts = fmt.Sprintf("/tasks/%d/accounts", masterSource)
	wantText(t, s.do(t, "POST", accounts, `{"source_login":"ann@example.com"}`), http.StatusBadRequest,
		"destination_password must not be empty: the source logs in without one, so there is none to share")
	if got := s.do(t, "POST", accounts, `{"source_login":"ann@example.com","destination_password":"pw"}`); got.status != http.StatusCreated {
		t.Fatalf("the destination's password alone: %v", got)
	}
	wantText(t, s.do(t, "POST", accounts+"/import", "bob@example.com\n"), http.StatusBadRequest,
		"line 1: destination_password must not be empty: the source logs in without one, so there is none to share")

	passwords := s.createTask(t, s.createEndpoint(t, oldServer), s.createEndpoint(t, oldServer))
	wantText(t, s.do(t, "POST", fmt.Sprintf("/tasks/%d/accounts", passwords), `{"source_login":"ann@example.com"}`), http.StatusBadRequest,
		"source_password must not be empty")
}

// TestEndpointOAuth2: an endpoint keeps an OAuth 2.0 application whose
// client secret is written once and never shown; a provider fills in its
// token endpoint and scopes; app-only needs the secret; accounts bring
// refresh tokens by their own name, or nothing for app-only.
func TestEndpointOAuth2(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	const secret = "Client-Sekrit-77"
	body := `{"host":"outlook.office365.com","tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"provider":"microsoft365",
		"tenant":"contoso.onmicrosoft.com","grant":"client_credentials","client_id":"app-id","client_secret":"` + secret + `"}}}`
	got := s.do(t, "POST", "/endpoints", body)
	var created api.Created
	if err := json.Unmarshal([]byte(got.body), &created); got.status != http.StatusCreated || err != nil {
		t.Fatalf("create: %v", got)
	}
	appOnly := created.Id
	want := api.OAuth2Settings{Grant: api.OAuth2GrantClientCredentials, ClientId: "app-id", ClientSecretSet: true, Mechanism: api.TokenMechanismXoauth2,
		TokenUrl: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token", Scope: "https://outlook.office365.com/.default"}
	if a := s.endpointAuth(t, appOnly); a.Method != api.AuthMethodOauth2 || a.Oauth2 == nil || *a.Oauth2 != want {
		t.Errorf("created: %+v, want oauth2 %+v", a, want)
	}
	// A PUT without the secret keeps it.
	path := fmt.Sprintf("/endpoints/%d", appOnly)
	if got := s.do(t, "PUT", path, `{"host":"outlook.office365.com","tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"grant":"client_credentials",
		"token_url":"`+want.TokenUrl+`","client_id":"app-id-2","scope":"`+want.Scope+`"}}}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT without the secret: %v", got)
	}
	want.ClientId = "app-id-2"
	if a := s.endpointAuth(t, appOnly); a.Oauth2 == nil || *a.Oauth2 != want {
		t.Errorf("after a PUT without the secret: %+v, want %+v", a.Oauth2, want)
	}
	wantText(t, s.do(t, "POST", "/endpoints", `{"tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"provider":"microsoft365","tenant":"t","grant":"client_credentials","client_id":"a"}}}`),
		http.StatusBadRequest, "auth.oauth2.client_secret must not be empty with the client_credentials grant")
	wantText(t, s.do(t, "POST", "/endpoints", `{"tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"provider":"google","grant":"service_account","client_id":"a"}}}`),
		http.StatusBadRequest, "auth.oauth2.client_secret must be the service account's JSON key file with the service_account grant")
	// Switching a stored endpoint to service_account needs the key file: the stored secret is the other grant's.
	wantText(t, s.do(t, "PUT", path, `{"host":"imap.gmail.com","tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"provider":"google","grant":"service_account","client_id":"a"}}}`),
		http.StatusBadRequest, "auth.oauth2.client_secret must be the service account's JSON key file with the service_account grant")
	wantText(t, s.do(t, "POST", "/endpoints", `{"tls_mode":"ssl","auth":{"method":"oauth2"}}`),
		http.StatusBadRequest, "auth.oauth2.client_id must not be empty with the oauth2 method")

	delegated := s.createEndpoint(t, api.EndpointInput{Host: "imap.gmail.com", TlsMode: api.TLSModeSsl, Auth: &api.EndpointAuthInput{Method: api.AuthMethodOauth2,
		Oauth2: &api.OAuth2Input{Provider: api.OAuth2ProviderGoogle, ClientId: "google-app", ClientSecret: secret}}})
	refreshTokens := s.createTask(t, delegated, appOnly)
	accounts := fmt.Sprintf("/tasks/%d/accounts", refreshTokens)
	if got := s.do(t, "POST", accounts, `{"source_login":"zoe@example.com"}`); got.status != http.StatusCreated {
		t.Errorf("an account whose refresh token comes later: %v", got)
	}
	wantText(t, s.do(t, "POST", accounts, `{"source_login":"ann@example.com","source_password":"pw","source_refresh_token":"rt"}`),
		http.StatusBadRequest, "source_refresh_token cannot go with source_password: give one of the two")
	if got := s.do(t, "POST", accounts, `{"source_login":"ann@example.com","source_refresh_token":"1//0g-Refresh-Sekrit"}`); got.status != http.StatusCreated {
		t.Fatalf("an account with a refresh token: %v", got)
	}
	if got := s.do(t, "POST", accounts+"/import", "source_login,source_refresh_token\nbob@example.com,1//0g-Refresh-Sekrit-2\n"); got.status != http.StatusCreated {
		t.Fatalf("a file of refresh tokens: %v", got)
	}

	out := s.do(t, "GET", "/endpoints", "").body + s.do(t, "GET", accounts, "").body + s.logs.String()
	for _, leak := range []string{secret, "Refresh-Sekrit", "client_secret\""} {
		if strings.Contains(out, leak) {
			t.Errorf("%q left the service:\n%s", leak, out)
		}
	}
	var stored int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM endpoints WHERE position('Client-Sekrit'::bytea in oauth2_client_secret) > 0`).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("%d endpoints hold the client secret in clear (%v)", stored, err)
	}
}
