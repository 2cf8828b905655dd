package secret

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Redacted stands where Scrub took a secret out.
const Redacted = "[redacted]"

// credentialShapes are what a credential looks like in a server's answer,
// and what stays of each: an Authorization header's value, a form or JSON
// field of one (a token endpoint that echoes the request), a JWT, and the
// service's own API tokens. words are what every text of the shape holds,
// in lower case: a text with none of them is not searched for it, which
// spares most of the service's own words (an attempt's events) four
// regular expressions each.
var credentialShapes = []struct {
	shape *regexp.Regexp
	keep  string
	words []string
}{
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`), "${1} " + Redacted, []string{"bearer", "basic"}},
	{regexp.MustCompile(`(?i)\b(refresh_token|access_token|id_token|client_secret|client_assertion|assertion|code_verifier|password|passwd|secret)` +
		`("?\s*[:=]\s*"?)[^\s"'&,;}]+`), "${1}${2}" + Redacted, []string{"token", "secret", "assertion", "verifier", "passw"}},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`), Redacted, []string{"eyj"}},
	{regexp.MustCompile(`\bmmt_[0-9a-f]{16,}`), Redacted, []string{"mmt_"}},
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
	return scrubShapes(text)
}

// scrubShapes takes out of text what is shaped like a credential,
// searching only for the shapes whose words text holds. Not so in a text
// beyond ASCII: (?i) matches "ſ" for "s", which lower case keeps.
func scrubShapes(text string) string {
	byWords := !strings.ContainsFunc(text, func(r rune) bool { return r >= utf8.RuneSelf })
	lower := text
	if byWords {
		lower = strings.ToLower(text)
	}
	for _, c := range credentialShapes {
		if byWords && !slices.ContainsFunc(c.words, func(w string) bool { return strings.Contains(lower, w) }) {
			continue
		}
		text = c.shape.ReplaceAllString(text, c.keep)
	}
	return text
}
