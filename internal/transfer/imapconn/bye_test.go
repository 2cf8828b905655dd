package imapconn

import "testing"

// TestNoteBye: a BYE is the server's last word when it ends what was
// read; one inside a message's body, or followed by more, is not.
func TestNoteBye(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		reads []string
		want  string // "": none kept
	}{
		{"last words", []string{"* 3 EXISTS\r\n* BYE Session invalidated - AccessTokenExpired\r\n"}, "Session invalidated - AccessTokenExpired"},
		{"alone in its read", []string{"A1 OK done\r\n", "* BYE [UNAVAILABLE] come back later\r\n"}, "[UNAVAILABLE] come back later"},
		{"inside a body", []string{"Subject: x\r\n\r\n* BYE not a server's\r\nmore of the body\r\n"}, ""},
		{"followed by a later read", []string{"* BYE maybe\r\n", "* 4 EXISTS\r\n"}, ""},
		{"not at a line's start", []string{"quoted * BYE words\r\n"}, ""},
	} {
		c := &idleConn{}
		for _, read := range tc.reads {
			c.noteBye([]byte(read))
		}
		got := ""
		if text := c.bye.Load(); text != nil {
			got = *text
		}
		if got != tc.want {
			t.Errorf("%s: kept %q, want %q", tc.name, got, tc.want)
		}
	}
}
