package oauth

import (
	"encoding/base64"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// TestSignInAsksWhoSignedIn: a user's sign-in asks for the OpenID Connect
// scopes besides the application's, once; the names of the ID token that
// comes with the refresh token are read, and a token without one, or with
// one that does not parse, names no one.
func TestSignInAsksWhoSignedIn(t *testing.T) {
	t.Parallel()
	c := Config{Scopes: []string{"https://outlook.office365.com/IMAP.AccessAsUser.All", "offline_access", "email"}}
	if got := strings.Join(c.signInConfig("").Scopes, " "); got != "https://outlook.office365.com/IMAP.AccessAsUser.All offline_access email openid" {
		t.Errorf("sign-in scopes %q", got)
	}
	if len(c.Scopes) != 3 {
		t.Errorf("the application's scopes changed: %q", c.Scopes)
	}
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"preferred_username":"ann@corp.example","email":"ann@example.com","upn":"ann@corp.example","sub":"x"}`))
	for _, tc := range []struct {
		name, idToken string
		want          []string
	}{
		{"email and sign-in name", "eyJhbGciOiJSUzI1NiJ9." + claims + ".c2ln", []string{"ann@example.com", "ann@corp.example"}},
		{"no ID token", "", nil},
		{"not a JWT", "opaque", nil},
		{"a payload that is not JSON", "a.bm90IGpzb24.c", nil},
	} {
		token := (&oauth2.Token{RefreshToken: "rt"}).WithExtra(map[string]any{"id_token": tc.idToken})
		got, err := signedIn(token)
		if err != nil || got.RefreshToken != "rt" || strings.Join(got.Identities, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: %+v %v, want the names %q", tc.name, got, err, tc.want)
		}
	}
}
