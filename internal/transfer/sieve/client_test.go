package sieve

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// dialDovecot logs in to d's ManageSieve as login, over STARTTLS.
func dialDovecot(t *testing.T, d *imaptest.Dovecot, login, password string) *Client {
	t.Helper()
	conn, err := net.Dial("tcp", d.SieveAddr())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(conn, 10*time.Second, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.StartTLS(d.TLSConfig()); err != nil {
		t.Fatal(err)
	}
	if err := c.Authenticate(sasl.NewPlainClient("", login, password)); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClientOnDovecot: against Pigeonhole's ManageSieve, the client lists,
// reads, stores, checks and activates scripts, and a refusal carries the
// server's words.
func TestClientOnDovecot(t *testing.T) {
	d := imaptest.StartDovecot(t, imaptest.Options{Users: map[string]string{"alice": "pw-alice"}, ManageSieve: true})
	d.WriteScript(t, "alice", "filters", "require \"fileinto\";\r\nfileinto \"Lists\";\r\n", true)
	d.WriteScript(t, "alice", "old", "keep;\r\n", false)
	c := dialDovecot(t, d, "alice", "pw-alice")
	if !c.Capabilities().HasExtension("fileinto") || c.Capabilities().Implementation == "" {
		t.Errorf("capabilities %+v lack fileinto or the implementation", c.Capabilities())
	}
	scripts, err := c.ListScripts()
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 2 || !containsScript(scripts, Script{"filters", true}) || !containsScript(scripts, Script{"old", false}) {
		t.Errorf("scripts %+v, want filters (active) and old", scripts)
	}
	content, err := c.GetScript("filters")
	if err != nil || content != "require \"fileinto\";\r\nfileinto \"Lists\";\r\n" {
		t.Errorf("GETSCRIPT filters: %q, %v", content, err)
	}
	vacation := "require \"vacation\";\r\nvacation :days 3 text:\r\nAway; back \"soon\".\r\n.\r\n;\r\n"
	if err := c.PutScript("away", vacation); err != nil {
		t.Fatal(err)
	}
	if err := c.SetActive("away"); err != nil {
		t.Fatal(err)
	}
	onDisk, active := d.Scripts(t, "alice")
	if onDisk["away"] != vacation || active != "away" {
		t.Errorf("on disk: %q, active %q", onDisk["away"], active)
	}
	err = c.CheckScript("require \"editheader\";\r\naddheader \"X-A\" \"b\";\r\n")
	var refusal *Error
	if !errors.As(err, &refusal) || refusal.Status != "NO" || !strings.Contains(err.Error(), "editheader") || strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("CHECKSCRIPT of a disabled extension: %q, want NO naming editheader, on one line", err)
	}
	if _, err := c.GetScript("missing"); !errors.As(err, &refusal) || refusal.Code != "NONEXISTENT" {
		t.Errorf("GETSCRIPT of a missing script: %v, want NO (NONEXISTENT)", err)
	}
	if err := c.PutScript("broken", "fileinto \"x\";"); err == nil {
		t.Error("PUTSCRIPT of a script without its require was taken")
	}
}

func containsScript(scripts []Script, s Script) bool {
	for _, have := range scripts {
		if have == s {
			return true
		}
	}
	return false
}

// TestReadTokens: the parts of response lines, literals and codes
// included.
func TestReadTokens(t *testing.T) {
	for _, c := range []struct {
		wire string
		want []token
	}{
		{"\"IMPLEMENTATION\" \"Dovecot\"\r\n", []token{{tokenString, "IMPLEMENTATION"}, {tokenString, "Dovecot"}}},
		{"NO (QUOTA/MAXSIZE) \"too big\"\r\n", []token{{tokenAtom, "NO"}, {tokenCode, "QUOTA/MAXSIZE"}, {tokenString, "too big"}}},
		{"{11}\r\nkeep;\r\nstop\r\n", []token{{tokenString, "keep;\r\nstop"}}},
		{"NO (SASL \"a)b\") {3+}\r\nbad\r\n", []token{{tokenAtom, "NO"}, {tokenCode, "SASL"}, {tokenString, "bad"}}},
		{"\"a\\\"b\" ACTIVE\r\n", []token{{tokenString, `a"b`}, {tokenAtom, "ACTIVE"}}},
	} {
		got, err := readTokens(bufio.NewReader(strings.NewReader(c.wire)))
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v, %v", c.wire, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: token %d is %+v, want %+v", c.wire, i, got[i], c.want[i])
			}
		}
	}
}

// FuzzReadTokens: no input makes the reader panic or return more text
// than it was sent.
func FuzzReadTokens(f *testing.F) {
	f.Add("OK (WARNINGS) \"line 2: unknown\"\r\n")
	f.Add("{5+}\r\nabcde \"x\"\r\n")
	f.Add("\"SIEVE\" \"fileinto vacation\"\r\n")
	f.Fuzz(func(t *testing.T, wire string) {
		r := bufio.NewReader(strings.NewReader(wire))
		for range 64 {
			line, err := readTokens(r)
			if err != nil {
				return
			}
			total := 0
			for _, tok := range line {
				total += len(tok.text)
			}
			if total > len(wire) {
				t.Fatalf("%d bytes of tokens from %d bytes", total, len(wire))
			}
		}
	})
}
