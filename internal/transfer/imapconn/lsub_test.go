package imapconn

import "testing"

func TestParseLSUB(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		response, folder string
		ok               bool
	}{
		{`LSUB () "/" "Projects/2024"`, "Projects/2024", true},
		{`LSUB (\HasNoChildren) "." INBOX.Sent`, "INBOX.Sent", true},
		{`LSUB () "/" "Entw&APw-rfe"`, "Entwürfe", true},
		{`LSUB () NIL "with \"quotes\" \\ and space"`, `with "quotes" \ and space`, true},
		{`LSUB () "/" inbox`, "INBOX", true},
		{`LSUB (\Noselect) "/" "Archive"`, "", false}, // listed for a subscribed child
		{`LIST () "/" "Projects"`, "", false},
		{`LSUB () "/" "unterminated`, "", false},
		{`LSUB`, "", false},
	} {
		folder, ok := parseLSUB(tc.response)
		if folder != tc.folder || ok != tc.ok {
			t.Errorf("parseLSUB(%q) = %q %v, want %q %v", tc.response, folder, ok, tc.folder, tc.ok)
		}
	}
}

func TestDecodeMailboxNameInvertsEncode(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"INBOX", "Entwürfe", "日本語/下書き", "a&b", "&", "Ünïcödé & more", "😀 emoji"} {
		if got := DecodeMailboxName(EncodeMailboxName(name)); got != name {
			t.Errorf("decode(encode(%q)) = %q", name, got)
		}
	}
	// Malformed runs stay as sent rather than vanish.
	for _, wire := range []string{"bad&", "bad&!!!-", "odd&AP-"} {
		if got := DecodeMailboxName(wire); got != wire {
			t.Errorf("decode(%q) = %q, want it unchanged", wire, got)
		}
	}
}
