package imapconn

import (
	"regexp"
	"strings"
	"testing"
)

var encodingRE = regexp.MustCompile(`^([\x20-\x25\x27-\x7e]|&-|&[A-Za-z0-9+,]+-)*$`)

// FuzzMailboxNameUTF7 checks that any UTF-8 folder name encodes to
// printable ASCII of RFC 3501's grammar (so the lenient decoder's
// fallbacks never apply) and decodes back to itself, and that printable
// ASCII without "&" is left alone.
func FuzzMailboxNameUTF7(f *testing.F) {
	for _, name := range []string{"INBOX", "Entwürfe", "日本語", "Tom & Jerry", "Sent/Ünïcode", "~peter/mail/台北", "a😀b", "&&", "&-", "", "\x7f\x00\t", "é&é"} {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		// Folder names are UTF-8 (the domain refuses others).
		name = strings.ToValidUTF8(name, "\uFFFD")
		encoded := EncodeMailboxName(name)
		if !encodingRE.MatchString(encoded) {
			t.Fatalf("EncodeMailboxName(%q) = %q: not modified UTF-7", name, encoded)
		}
		if decoded := DecodeMailboxName(encoded); decoded != name {
			t.Fatalf("EncodeMailboxName(%q) = %q, which decodes to %q", name, encoded, decoded)
		}
		if !strings.Contains(name, "&") && isPrintableASCII(name) && encoded != name {
			t.Fatalf("printable ASCII %q encoded as %q", name, encoded)
		}
	})
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
