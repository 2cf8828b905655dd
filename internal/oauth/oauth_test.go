package oauth_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/oauth"
)

// TestTokensAreKeptUntilEarlyBeforeTheirExpiry: a token is reused while
// it lives longer than the margin, and replaced once it does not, so that
// no connection logs in with a token about to die.
func TestTokensAreKeptUntilEarlyBeforeTheirExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		lifetime   time.Duration
		wantIssued int
	}{
		{"an hour's token is reused", time.Hour, 1},
		{"a token within the margin is replaced", 4 * time.Minute, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tokens := imaptest.StartTokenServer(t, imaptest.TokenServerOptions{Lifetime: tc.lifetime})
			tokens.AddClient("app", "secret")
			src := oauth.Config{TokenURL: tokens.URL, ClientID: "app", ClientSecret: "secret"}.ForUser(tokens.IssueRefreshToken("ann", "app"), nil)
			for range 3 {
				token, err := src.Token(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if grant, ok := tokens.Check(token); !ok || grant.User != "ann" {
					t.Fatalf("token %q is not ann's: %+v", token, grant)
				}
			}
			if n := tokens.Issued("refresh_token"); n != tc.wantIssued {
				t.Errorf("%d tokens issued for 3 logins, want %d", n, tc.wantIssued)
			}
		})
	}
}

// TestRefusalsAreTold: the token endpoint's OAuth errors become a
// RefusedError, which a retry does not mend.
func TestRefusalsAreTold(t *testing.T) {
	t.Parallel()
	tokens := imaptest.StartTokenServer(t, imaptest.TokenServerOptions{})
	tokens.AddClient("app", "secret")
	_, err := oauth.Config{TokenURL: tokens.URL, ClientID: "app", ClientSecret: "secret"}.ForUser("not-a-token", nil).Token(t.Context())
	var refused *oauth.RefusedError
	if !errors.As(err, &refused) || refused.Code != "invalid_grant" || !refused.Refused() {
		t.Errorf("an unknown refresh token: %v", err)
	}
	_, err = oauth.Config{TokenURL: "http://127.0.0.1:1/token", ClientID: "app"}.ForApplication().Token(t.Context())
	if err == nil || errors.As(err, &refused) {
		t.Errorf("an unreachable token endpoint: %v, want an error that is not a refusal", err)
	}
}

// TestTokenEndpointAnswersLeaveNoSecret: an authorization server that
// echoes the request in its answer (as one did, in a 500) or names the
// refresh token in its error description gives an error that holds
// neither the refresh token nor the client secret: its words go to the
// account's error, events, reports, webhooks and logs.
func TestTokenEndpointAnswersLeaveNoSecret(t *testing.T) {
	t.Parallel()
	const refresh, clientSecret = "1//0gRefresh-Token-of-ann", "the-client-s3cret"
	for _, tc := range []struct {
		name   string
		status int
		body   func(form url.Values) string
	}{
		{"500 echoing the request", http.StatusInternalServerError, func(form url.Values) string {
			return "internal error while handling " + form.Encode() + " with " + form.Get("refresh_token")
		}},
		{"400 naming the token", http.StatusBadRequest, func(form url.Values) string {
			return `{"error":"invalid_grant","error_description":"refresh token ` + form.Get("refresh_token") +
				` of client ` + form.Get("client_id") + ` (secret ` + form.Get("client_secret") + `) is revoked"}`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm() //nolint:errcheck // an empty form is echoed as empty
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body(r.PostForm)) //nolint:errcheck // the client reads what came
			}))
			t.Cleanup(server.Close)
			config := oauth.Config{TokenURL: server.URL, ClientID: "app", ClientSecret: clientSecret}
			_, err := config.ForUser(refresh, nil).Token(t.Context())
			if err == nil {
				t.Fatal("no error")
			}
			for _, secret := range []string{refresh, clientSecret, url.QueryEscape(refresh), "0gRefresh"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error %q holds %q", err, secret)
				}
			}
		})
	}
}
