package secret

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted stands where Scrub took a secret out.
const Redacted = "[redacted]"

// credentialShapes are what a credential looks like in a server's answer,
// and what stays of each: an Authorization header's value, a form or JSON
// field of one (a token endpoint that echoes the request), a JWT, and the
// service's own API tokens.
var credentialShapes = []struct {
	shape *regexp.Regexp
	keep  string
}{
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`), "${1} " + Redacted},
	{regexp.MustCompile(`(?i)\b(refresh_token|access_token|id_token|client_secret|client_assertion|assertion|code_verifier|password|passwd|secret)` +
		`("?\s*[:=]\s*"?)[^\s"'&,;}]+`), "${1}${2}" + Redacted},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`), Redacted},
	{regexp.MustCompile(`\bmmt_[0-9a-f]{16,}`), Redacted},
}

// minKnownSecret is the shortest known secret Scrub takes out as it is: a
// shorter one would blank ordinary words.
const minKnownSecret = 4

// Scrub takes out of text, which came from outside the service (a
// server's or an authorization server's answer, a receiver's reply),
// every secret in known (as it is, and URL-encoded, as a form carries it)
// and anything shaped like a credential, before the text is stored,
// logged, mailed, posted or shown.
func Scrub(text string, known ...string) string {
	for _, s := range known {
		if len(s) < minKnownSecret {
			continue
		}
		text = strings.ReplaceAll(text, s, Redacted)
		if encoded := url.QueryEscape(s); encoded != s {
			text = strings.ReplaceAll(text, encoded, Redacted)
		}
	}
	for _, c := range credentialShapes {
		text = c.shape.ReplaceAllString(text, c.keep)
	}
	return text
}
