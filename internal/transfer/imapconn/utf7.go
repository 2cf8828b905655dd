package imapconn

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
)

// mailboxUTF7 is base64 with "," for "/" and no padding (RFC 3501 §5.1.3).
var mailboxUTF7 = base64.NewEncoding("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,").WithPadding(base64.NoPadding)

// EncodeMailboxName writes a mailbox name in modified UTF-7 (RFC 3501
// §5.1.3), as servers without UTF8=ACCEPT expect on the wire: printable
// ASCII stands for itself ("&" as "&-"), every other run of characters is
// UTF-16BE in modified base64 between "&" and "-".
func EncodeMailboxName(name string) string {
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

// DecodeMailboxName reads a mailbox name in modified UTF-7, the inverse of
// EncodeMailboxName. A malformed shifted run is kept as it stands: a
// name is never lost, at worst shown as the server sent it.
func DecodeMailboxName(wire string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(wire, '&')
		if i < 0 {
			b.WriteString(wire)
			return b.String()
		}
		b.WriteString(wire[:i])
		j := strings.IndexByte(wire[i:], '-')
		if j < 0 {
			b.WriteString(wire[i:])
			return b.String()
		}
		run := wire[i+1 : i+j]
		wire = wire[i+j+1:]
		if run == "" {
			b.WriteByte('&')
			continue
		}
		raw, err := mailboxUTF7.DecodeString(run)
		if err != nil || len(raw)%2 != 0 {
			b.WriteString("&" + run + "-")
			continue
		}
		units := make([]uint16, len(raw)/2)
		for k := range units {
			units[k] = uint16(raw[2*k])<<8 | uint16(raw[2*k+1])
		}
		b.WriteString(string(utf16.Decode(units)))
	}
}
