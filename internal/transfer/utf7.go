package transfer

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
)

// mailboxUTF7 is base64 with "," for "/" and no padding (RFC 3501 §5.1.3).
var mailboxUTF7 = base64.NewEncoding("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,").WithPadding(base64.NoPadding)

// encodeMailboxName writes a mailbox name in modified UTF-7 (RFC 3501
// §5.1.3), as servers without UTF8=ACCEPT expect on the wire: printable
// ASCII stands for itself ("&" as "&-"), every other run of characters is
// UTF-16BE in modified base64 between "&" and "-".
func encodeMailboxName(name string) string {
	var b strings.Builder
	var run []rune
	flush := func() {
		if len(run) == 0 {
			return
		}
		units := utf16.Encode(run)
		raw := make([]byte, 2*len(units))
		for i, u := range units {
			raw[2*i], raw[2*i+1] = byte(u>>8), byte(u)
		}
		b.WriteByte('&')
		b.WriteString(mailboxUTF7.EncodeToString(raw))
		b.WriteByte('-')
		run = run[:0]
	}
	for _, r := range name {
		switch {
		case r == '&':
			flush()
			b.WriteString("&-")
		case r >= 0x20 && r <= 0x7e:
			flush()
			b.WriteRune(r)
		default:
			run = append(run, r)
		}
	}
	flush()
	return b.String()
}
