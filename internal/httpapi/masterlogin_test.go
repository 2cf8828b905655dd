package httpapi_test

import (
	"context"
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
		{`{"tls_mode":"ssl","auth":{"master_login":"admin","master_password":"x"}}`, "auth.method must be password|master"},
		{`{"tls_mode":"ssl","auth":{"method":"oauth"}}`, "auth.method must be password|master"},
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
		"destination_password must not be empty: the source's master login leaves no account password to share")
	if got := s.do(t, "POST", accounts, `{"source_login":"ann@example.com","destination_password":"pw"}`); got.status != http.StatusCreated {
		t.Fatalf("the destination's password alone: %v", got)
	}
	wantText(t, s.do(t, "POST", accounts+"/import", "bob@example.com\n"), http.StatusBadRequest,
		"line 1: destination_password must not be empty: the source's master login leaves no account password to share")

	passwords := s.createTask(t, s.createEndpoint(t, oldServer), s.createEndpoint(t, oldServer))
	wantText(t, s.do(t, "POST", fmt.Sprintf("/tasks/%d/accounts", passwords), `{"source_login":"ann@example.com"}`), http.StatusBadRequest,
		"source_password must not be empty")
}
