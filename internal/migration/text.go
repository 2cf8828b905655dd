package migration

import (
	"net/url"
	"unicode/utf8"
)

// checkText checks a text field a client sets: at most maxBytes of valid
// UTF-8 without control characters.
func checkText(field, value string, maxBytes int) error {
	if len(value) > maxBytes {
		return invalid(field, "must be at most %d bytes", maxBytes)
	}
	if !utf8.ValidString(value) {
		return invalid(field, "must be valid UTF-8")
	}
	if hasControl(value) {
		return invalid(field, "must not contain control characters")
	}
	return nil
}

// plainText reports whether s is at most maxBytes of valid UTF-8 without
// control characters: what checkText accepts, for the rules that say so
// in one sentence of their own.
func plainText(s string, maxBytes int) bool {
	return len(s) <= maxBytes && utf8.ValidString(s) && !hasControl(s)
}

// hasControl reports whether s has a control character: C0 (such as NUL,
// CR or LF), DEL or C1 (U+0080 to U+009F). No label, host, login or folder
// name needs one; PostgreSQL refuses NUL, CR or LF would end an IMAP
// command line, and the others garble logs and terminals.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return true
		}
	}
	return false
}

// webURL parses raw as an absolute http or https URL of plain text, at
// most MaxURLBytes; ok is false for anything else.
func webURL(raw string) (u *url.URL, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || !plainText(raw, MaxURLBytes) {
		return nil, false
	}
	return u, true
}
