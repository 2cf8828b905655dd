package oauth_test

import (
	"errors"
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
