package imapconn

import "testing"

func TestEncodeMailboxName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"INBOX":          "INBOX",
		"Entwürfe":       "Entw&APw-rfe",
		"日本語":            "&ZeVnLIqe-",
		"Tom & Jerry":    "Tom &- Jerry",
		"Sent/Ünïcode":   "Sent/&ANw-n&AO8-code",
		"~peter/mail/台北": "~peter/mail/&U,BTFw-", // RFC 3501 §5.1.3's own example
		"a😀b":            "a&2D3eAA-b",           // beyond the BMP: a surrogate pair
	} {
		if got := EncodeMailboxName(name); got != want {
			t.Errorf("EncodeMailboxName(%q) = %q, want %q", name, got, want)
		}
	}
}
