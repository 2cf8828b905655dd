package secret

import (
	"strings"
	"testing"
)

// TestScrubTakesSecretsOut: known secrets, raw or URL-encoded, and
// whatever is shaped like a credential leave a server's answer; the
// words around them stay.
func TestScrubTakesSecretsOut(t *testing.T) {
	t.Parallel()
	const refresh, client = "1//0gRefresh-Token+with/chars", "cl1ent-s3cret"
	for _, tc := range []struct {
		text  string
		known []string
		gone  []string
		kept  string
	}{
		{"500: grant_type=refresh_token&refresh_token=1%2F%2F0gRefresh-Token%2Bwith%2Fchars&client_secret=cl1ent-s3cret",
			[]string{refresh, client}, []string{"0gRefresh", "cl1ent-s3cret", "1%2F%2F0g"}, "500: grant_type=refresh_token&refresh_token="},
		{`{"error":"server_error","echo":{"client_secret":"other-secret-value","refresh_token":"rt-value-1234"}}`,
			nil, []string{"other-secret-value", "rt-value-1234"}, `"error":"server_error"`},
		{"NO [AUTHENTICATIONFAILED] Authorization: Bearer ya29.a0AfH6SMBx-very-long-token", nil,
			[]string{"ya29.a0AfH6SMBx"}, "NO [AUTHENTICATIONFAILED] Authorization: Bearer"},
		{"id_token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2lnbmF0dXJl in the body", nil,
			[]string{"eyJhbGciOiJSUzI1NiJ9"}, "in the body"},
		{"LOGIN alice hunter2-pw refused", []string{"hunter2-pw"}, []string{"hunter2-pw"}, "LOGIN alice"},
		{"token mmt_0123456789abcdef0123456789abcdef leaked", nil, []string{"mmt_0123456789abcdef"}, "leaked"},
		{"Authentication failed.", []string{"pw"}, nil, "Authentication failed."},
	} {
		got := Scrub(tc.text, tc.known...)
		for _, secret := range tc.gone {
			if strings.Contains(got, secret) {
				t.Errorf("Scrub(%q) = %q: %q is still there", tc.text, got, secret)
			}
		}
		if !strings.Contains(got, tc.kept) {
			t.Errorf("Scrub(%q) = %q: lost %q", tc.text, got, tc.kept)
		}
	}
}

// FuzzScrubWordsSkipNoCredential: searching a text only for the shapes
// whose words it holds takes out exactly what searching for every shape
// does.
func FuzzScrubWordsSkipNoCredential(f *testing.F) {
	for _, seed := range []string{
		"Authorization: BEARER ya29.a0AfH6SMBx-very-long-token",
		"basic dXNlcjpwYXNzd29yZA==",
		`{"Client_Secret" : "abcdef", "PASSWD=x"}`,
		"code_verifier=abc&assertion=xyz&id_token=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2ln",
		"paſſword=hunter2 baſic dXNlcjpwYXNzd29yZA==",
		"mmt_0123456789abcdef0123 and MMT_0123456789ABCDEF0123",
		"account finished: 2 folders, 12 messages, nothing new",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		every := text
		for _, c := range credentialShapes {
			every = c.shape.ReplaceAllString(every, c.keep)
		}
		if byWords := scrubShapes(text); byWords != every {
			t.Errorf("scrubShapes(%q) by words = %q, with every shape %q", text, byWords, every)
		}
	})
}
