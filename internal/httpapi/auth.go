package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// Credentials decide whether a bearer token lets a request in, and whose
// it is: for the audit trail, and for the role its requests need
// (requireRole).
type Credentials interface {
	// Principal is whose token is; ok is false for a token that lets
	// nothing in.
	Principal(ctx context.Context, token string) (principal migration.Principal, ok bool, err error)
}

// StaticToken is the one token an operator configured
// (MAILMIGRATE_API_TOKEN), compared in constant time.
type StaticToken string

// staticTokenHolder names the configured token's holder.
const staticTokenHolder = "the API token configured (MAILMIGRATE_API_TOKEN)"

// Principal is the service's own admin for the configured token. It
// compares fixed-size digests, which takes the same time whatever the
// candidate, its length included.
func (s StaticToken) Principal(_ context.Context, token string) (migration.Principal, bool, error) {
	want, got := sha256.Sum256([]byte(s)), sha256.Sum256([]byte(token))
	if s != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
		return migration.Principal{TokenName: staticTokenHolder, Role: migration.RoleAdmin}, true, nil
	}
	return migration.Principal{}, false, nil
}

// AnyCredentials lets in a token that any of its members takes.
type AnyCredentials []Credentials

// Principal asks each member in turn.
func (members AnyCredentials) Principal(ctx context.Context, token string) (migration.Principal, bool, error) {
	for _, c := range members {
		if principal, ok, err := c.Principal(ctx, token); ok || err != nil {
			return principal, ok, err
		}
	}
	return migration.Principal{}, false, nil
}

// Session asks each member that keeps sessions in turn.
func (members AnyCredentials) Session(ctx context.Context, cookie string) (migration.Principal, string, bool, error) {
	for _, c := range members {
		if sessions, ok := c.(SessionCredentials); ok {
			if principal, csrf, ok, err := sessions.Session(ctx, cookie); ok || err != nil {
				return principal, csrf, ok, err
			}
		}
	}
	return migration.Principal{}, "", false, nil
}

// bodyUnauthorized is the plain-text body of every 401.
const bodyUnauthorized = "unauthorized"

// wsTokenProtocol is the WebSocket subprotocol that carries the token for
// browsers, whose WebSocket API cannot set an Authorization header: the
// client offers `Sec-WebSocket-Protocol: bearer, <token>` and the server
// accepts `bearer` alone, so the token is never echoed back.
const wsTokenProtocol = "bearer"

// accessTokenParam is the query parameter that may carry the token on the
// WebSocket route only: a URL ends up in logs and histories, so the other
// routes take the header alone.
const accessTokenParam = "access_token"

// requireToken answers 401 to every API request (path under BasePath, the
// served OpenAPI file aside) that does not carry a token creds take. It
// decides on the same path string chi routes on, so no encoding of the
// path reaches an API handler unchecked.
func requireToken(creds Credentials, logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !needsToken(r) {
				next.ServeHTTP(w, r)
				return
			}
			// letIn hands the request on as principal's.
			letIn := func(principal migration.Principal) {
				noteActor(r, principal.Holder())
				stripAccessToken(r)
				next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), principal)))
			}
			presented := presentedTokens(r)
			if len(presented) == 0 {
				sessions, _ := creds.(SessionCredentials)
				principal, ok, refused, err := sessionPrincipal(r, sessions)
				switch {
				case err != nil:
					logger.ErrorContext(r.Context(), "checking a console session", "err", err, "request_id", middleware.GetReqID(r.Context()))
					writeText(w, http.StatusServiceUnavailable, "the service cannot check sessions now; try again")
				case !ok:
					unauthorized(w, `Bearer realm="mailmigrate"`)
				case refused != "":
					noteActor(r, principal.Holder())
					writeText(w, http.StatusForbidden, refused)
				default:
					letIn(principal)
				}
				return
			}
			for _, candidate := range presented {
				principal, ok, err := creds.Principal(r.Context(), candidate)
				if err != nil {
					logger.ErrorContext(r.Context(), "checking an API token", "err", err, "request_id", middleware.GetReqID(r.Context()))
					writeText(w, http.StatusServiceUnavailable, "the service cannot check tokens now; try again")
					return
				}
				if ok {
					letIn(principal)
					return
				}
			}
			unauthorized(w, `Bearer realm="mailmigrate", error="invalid_token"`)
		})
	}
}

// needsToken reports whether r is an API request. The OpenAPI file stays
// open: it is the public contract (the same file as in the repository),
// holds no data, and Swagger UI must load it before anyone has entered a
// token.
func needsToken(r *http.Request) bool {
	path := routingPath(r)
	return isAPIPath(path) && path != specPath
}

// isAPIPath reports whether path is under BasePath.
func isAPIPath(path string) bool {
	return path == BasePath || strings.HasPrefix(path, BasePath+"/")
}

// routingPath is the path chi matches routes against.
func routingPath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	return r.URL.Path
}

// presentedTokens lists the tokens r carries: the Authorization header's
// bearer token, and on the event stream the access_token parameter and the
// token after the `bearer` subprotocol.
func presentedTokens(r *http.Request) []string {
	var tokens []string
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		tokens = append(tokens, strings.TrimSpace(token))
	}
	if routingPath(r) != streamPath {
		return tokens
	}
	if token := r.URL.Query().Get(accessTokenParam); token != "" {
		tokens = append(tokens, token)
	}
	if token, ok := subprotocolToken(r); ok {
		tokens = append(tokens, token)
	}
	return tokens
}

// subprotocolToken finds the token in `Sec-WebSocket-Protocol: bearer, <token>`.
func subprotocolToken(r *http.Request) (string, bool) {
	var offered []string
	for _, header := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(header, ",") {
			offered = append(offered, strings.TrimSpace(p))
		}
	}
	for i := 0; i+1 < len(offered); i++ {
		if offered[i] == wsTokenProtocol {
			return offered[i+1], true
		}
	}
	return "", false
}

// stripAccessToken removes the token from the URL once it has been checked,
// so that nothing further down (handlers, logs) can see or log it.
func stripAccessToken(r *http.Request) {
	q := r.URL.Query()
	if !q.Has(accessTokenParam) {
		return
	}
	q.Del(accessTokenParam)
	r.URL.RawQuery = q.Encode()
}

func unauthorized(w http.ResponseWriter, challenge string) {
	w.Header().Set("WWW-Authenticate", challenge)
	writeText(w, http.StatusUnauthorized, bodyUnauthorized)
}
