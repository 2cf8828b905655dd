package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// Signing in to the console with a name and a password
// (docs/security.md#signing-in): POST /signin opens a session whose
// secret travels in an HttpOnly, SameSite=Strict cookie, and answers the
// CSRF token that the session's state-changing requests carry in
// X-CSRF-Token; POST /signout ends it. Both are outside the API: the
// console's, like the sign-in callback of accounts.

// The sign-in's paths, cookie and header.
const (
	SignInPath        = "/signin"
	SignOutPath       = "/signout"
	sessionCookieName = "mailmigrate_session"
	csrfHeader        = "X-CSRF-Token"
)

// SessionCredentials decide whether a console session's cookie lets a
// request in, whose it is, and the CSRF token its changes must carry.
type SessionCredentials interface {
	Session(ctx context.Context, cookie string) (principal migration.Principal, csrf string, ok bool, err error)
}

// signedIn is what a sign-in answers: who, and the CSRF token.
type signedIn struct {
	Name      string         `json:"name"`
	Role      migration.Role `json:"role"`
	CSRFToken string         `json:"csrf_token"`
	ExpiresAt time.Time      `json:"expires_at"`
}

// signIn answers POST /signin with {"name", "password"}, a body
// checkJSONBody let through.
func signIn(service *migration.Service, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Name, Password string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeText(w, http.StatusBadRequest, bodyBadJSON)
			return
		}
		noteActor(r, "a sign-in as "+in.Name)
		session, err := service.SignIn(r.Context(), in.Name, in.Password)
		if err != nil {
			responseErrorHandler(logger)(w, r, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookieName, Value: session.Cookie, Path: "/", Expires: session.ExpiresAt,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(signedIn{Name: session.Principal.UserName, Role: session.Principal.Role, //nolint:errcheck // the client went away
			CSRFToken: session.CSRF, ExpiresAt: session.ExpiresAt})
	}
}

// signOut answers POST /signout: the session of the request's cookie ends,
// and the cookie goes.
func signOut(service *migration.Service, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if cookie, err := r.Cookie(sessionCookieName); err == nil {
			if err := service.SignOut(r.Context(), cookie.Value); err != nil {
				responseErrorHandler(logger)(w, r, err)
				return
			}
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookieName, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		w.WriteHeader(http.StatusNoContent)
	}
}

// sessionPrincipal is whose session r's cookie opens; ok false without
// one. A request that changes something must carry the session's CSRF
// token: refused says so (403), in words.
func sessionPrincipal(r *http.Request, sessions SessionCredentials) (principal migration.Principal, ok bool, refused string, err error) {
	cookie, cookieErr := r.Cookie(sessionCookieName)
	if cookieErr != nil || sessions == nil {
		return migration.Principal{}, false, "", nil
	}
	principal, csrf, ok, err := sessions.Session(r.Context(), cookie.Value)
	if err != nil || !ok {
		return migration.Principal{}, false, "", err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return principal, true, "", nil
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(csrfHeader)), []byte(csrf)) != 1 {
		return principal, true, "the request lacks its session's CSRF token (" + csrfHeader + "): reload the page", nil
	}
	return principal, true, "", nil
}
