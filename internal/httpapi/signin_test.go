package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestSignInWithAPassword: a user given a password signs in to the
// console and gets an HttpOnly, SameSite=Strict session cookie and a CSRF
// token; the cookie alone reads, and changes only with the token; wrong
// passwords lock the user out after five; a new password lets them in
// again; signing out ends the session; the audit trail names each
// sign-in, and no password is logged or recorded.
func TestSignInWithAPassword(t *testing.T) {
	t.Parallel()
	s := newTestServiceConfig(t, app.Config{DatabaseTokens: true})
	admin := s.userToken(t, "root@example.com", migration.RoleAdmin)
	user, _, err := s.process.Service.CreateUser(t.Context(), migration.UserInput{Name: "ann@example.com", Role: migration.RoleOperator}, migration.TokenInput{Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	const password = "a long enough passphrase"
	passwordPath := fmt.Sprintf("/users/%d/password", user.ID)
	if got := s.doAs(t, admin, "PUT", passwordPath, `{"password": "short"}`); got.status != http.StatusBadRequest ||
		got.body != "password must have at least 12 characters" {
		t.Errorf("a short password: %d %q", got.status, got.body)
	}
	if got := s.doAs(t, admin, "PUT", passwordPath, `{"password": "`+password+`"}`); got.status != http.StatusNoContent {
		t.Fatalf("set the password: %d %s", got.status, got.body)
	}
	signIn := func(name, password, contentType string) reply {
		t.Helper()
		req, err := http.NewRequest("POST", s.url+"/signin", strings.NewReader(fmt.Sprintf(`{"name": %q, "password": %q}`, name, password)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		return send(t, req)
	}
	withSession := func(cookie, csrf, method, path, body string) reply {
		t.Helper()
		req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Cookie", cookie)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		return send(t, req)
	}

	if got := signIn("ann@example.com", password, "text/plain"); got.status != http.StatusUnsupportedMediaType {
		t.Errorf("a sign-in as text/plain (a cross-site form): %d %s", got.status, got.body)
	}
	for _, wrong := range [][2]string{{"ann@example.com", "not the passphrase"}, {"nobody@example.com", password}} {
		if got := signIn(wrong[0], wrong[1], "application/json"); got.status != http.StatusUnauthorized || got.body != "name or password is wrong" {
			t.Errorf("sign in as %s with a wrong password or name: %d %q", wrong[0], got.status, got.body)
		}
	}
	in := signIn("ann@example.com", password, "application/json")
	if in.status != http.StatusOK {
		t.Fatalf("sign in: %d %s", in.status, in.body)
	}
	setCookie := in.header.Get("Set-Cookie")
	if !strings.HasPrefix(setCookie, "mailmigrate_session=mms_") || !strings.Contains(setCookie, "HttpOnly") || !strings.Contains(setCookie, "SameSite=Strict") {
		t.Errorf("the session cookie: %q", setCookie)
	}
	cookie, _, _ := strings.Cut(setCookie, ";")
	var session struct {
		Name      string `json:"name"`
		Role      string `json:"role"`
		CSRFToken string `json:"csrf_token"`
	}
	if err := json.Unmarshal([]byte(in.body), &session); err != nil || session.Role != "operator" || len(session.CSRFToken) < 32 {
		t.Fatalf("sign-in answer %s: %v", in.body, err)
	}

	if me := withSession(cookie, "", "GET", "/api/v1/me", ""); me.status != http.StatusOK || !strings.Contains(me.body, "ann@example.com (operator), console session") {
		t.Errorf("/me with the cookie: %d %s", me.status, me.body)
	}
	if got := withSession(cookie, "", "POST", "/api/v1/tokens", `{"name": "cli"}`); got.status != http.StatusForbidden ||
		!strings.Contains(got.body, "CSRF token") {
		t.Errorf("a change with the cookie alone: %d %q, want 403 for the missing CSRF token", got.status, got.body)
	}
	if got := withSession(cookie, "wrong", "POST", "/api/v1/tokens", `{"name": "cli"}`); got.status != http.StatusForbidden {
		t.Errorf("a change with a wrong CSRF token: %d %q", got.status, got.body)
	}
	if got := withSession(cookie, session.CSRFToken, "POST", "/api/v1/tokens", `{"name": "cli"}`); got.status != http.StatusCreated {
		t.Errorf("a change with the CSRF token: %d %s", got.status, got.body)
	}

	for range migration.DefaultSignInPolicy.Failures {
		signIn("ann@example.com", "guess", "application/json")
	}
	if got := signIn("ann@example.com", password, "application/json"); got.status != http.StatusUnauthorized ||
		!strings.HasPrefix(got.body, "too many wrong passwords: signing in as this user is locked until ") {
		t.Errorf("after five wrong passwords, the right one: %d %q", got.status, got.body)
	}
	if got := s.doAs(t, admin, "PUT", passwordPath, `{"password": "`+password+` anew"}`); got.status != http.StatusNoContent {
		t.Fatalf("set a new password: %d %s", got.status, got.body)
	}
	if got := signIn("ann@example.com", password+" anew", "application/json"); got.status != http.StatusOK {
		t.Errorf("the new password after a lock-out: %d %s", got.status, got.body)
	}

	if out := withSession(cookie, "", "POST", "/signout", ""); out.status != http.StatusNoContent || !strings.Contains(out.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("sign out: %d %q", out.status, out.header.Get("Set-Cookie"))
	}
	if me := withSession(cookie, "", "GET", "/api/v1/me", ""); me.status != http.StatusUnauthorized {
		t.Errorf("/me after signing out: %d", me.status)
	}

	viewer := s.userToken(t, "help-desk@example.com", migration.RoleViewer)
	if got := s.doAs(t, viewer, "PUT", passwordPath, `{"password": "taking over ann"}`); got.status != http.StatusNotFound {
		t.Errorf("a viewer sets ann's password: %d %s", got.status, got.body)
	}
	trail := s.doAs(t, admin, "GET", "/audit", "")
	if !strings.Contains(trail.body, `"actor":"a sign-in as ann@example.com"`) || !strings.Contains(trail.body, `"actor":"a sign-in as nobody@example.com"`) ||
		!strings.Contains(trail.body, "Sign in to the console with a name and a password.") {
		t.Errorf("the trail does not show the sign-ins: %.800s", trail.body)
	}
	for _, where := range []string{trail.body, s.logs.String()} {
		if strings.Contains(where, "passphrase") || strings.Contains(where, session.CSRFToken) || strings.Contains(where, "mms_") {
			t.Error("a password, a CSRF token or a session cookie reached the audit trail or the log")
		}
	}
}
