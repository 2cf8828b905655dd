package imapconn

import (
	"strings"
)

// SubscriptionsByLSUB returns the subscribed folders of s's account as
// LSUB lists them (RFC 3501 §6.3.9). Servers without LIST-EXTENDED have no
// other way to tell, and go-imap v2's client has no LSUB: the command is
// written by hand like MULTIAPPEND, on the session's own connection.
func SubscriptionsByLSUB(s *Session) (map[string]bool, error) {
	c := s.Borrow()
	defer c.Close()
	subscribed := map[string]bool{}
	c.KeepLiterals = true
	c.OnUntagged = func(response string) {
		if folder, ok := parseLSUB(response); ok {
			subscribed[folder] = true
		}
	}
	if err := c.Command(`LSUB "" "*"`); err != nil {
		return nil, s.Fail(Classify(err), err)
	}
	return subscribed, nil
}

// parseLSUB reads the folder of an untagged `LSUB (attributes) delimiter
// name` response. A folder marked \Noselect is listed only because a child
// of it is subscribed (RFC 3501 §6.3.9): it is not.
func parseLSUB(response string) (string, bool) {
	verb, rest, _ := strings.Cut(response, " ")
	if !strings.EqualFold(verb, "LSUB") || !strings.HasPrefix(rest, "(") {
		return "", false
	}
	attrs, rest, ok := strings.Cut(rest[1:], ")")
	if !ok || strings.Contains(strings.ToLower(attrs), `\noselect`) {
		return "", false
	}
	if _, rest, ok = CutAString(strings.TrimPrefix(rest, " ")); !ok { // the delimiter, or NIL
		return "", false
	}
	folder, _, ok := CutAString(strings.TrimPrefix(rest, " "))
	if !ok {
		return "", false
	}
	if strings.EqualFold(folder, "INBOX") {
		folder = "INBOX"
	}
	return DecodeMailboxName(folder), true
}

// CutAString reads an atom or a quoted string (RFC 9051 §4.3) from the
// start of s; literals arrive as quoted strings (see readLine).
func CutAString(s string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		value, rest, _ = strings.Cut(s, " ")
		return value, rest, value != ""
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '"':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
