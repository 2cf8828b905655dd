package imaptest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// SieveAddr is the host:port of ManageSieve (Options.ManageSieve).
func (d *Dovecot) SieveAddr() string { return net.JoinHostPort(d.Host, strconv.Itoa(d.SievePort)) }

// WriteScript stores a Sieve script of login's as Pigeonhole keeps it
// (~/sieve/NAME.sieve), and makes it the active one when active: the
// state a user's mail client would have left, written behind the server's
// back so that a test does not depend on the client it tests.
func (d *Dovecot) WriteScript(t testing.TB, login, name, content string, active bool) {
	t.Helper()
	dir := filepath.Join(d.home(login), "sieve")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	path := filepath.Join(dir, name+".sieve")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	for _, p := range []string{dir, path} {
		if err := d.acct.chown(p); err != nil {
			t.Fatalf("imaptest: %v", err)
		}
	}
	if active {
		link := filepath.Join(d.home(login), ".dovecot.sieve")
		os.Remove(link)
		if err := os.Symlink(filepath.Join("sieve", name+".sieve"), link); err != nil {
			t.Fatalf("imaptest: %v", err)
		}
		if os.Geteuid() == 0 {
			os.Lchown(link, d.acct.mailUID, d.acct.mailGID)
		}
	}
}

// Scripts reads login's Sieve scripts from disk, by name, and which one
// is active ("" for none).
func (d *Dovecot) Scripts(t testing.TB, login string) (scripts map[string]string, active string) {
	t.Helper()
	scripts = map[string]string{}
	dir := filepath.Join(d.home(login), "sieve")
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("imaptest: %v", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sieve")
		if !ok || e.IsDir() {
			continue
		}
		content, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatalf("imaptest: %v", err)
		}
		scripts[name] = string(content)
	}
	if target, err := os.Readlink(filepath.Join(d.home(login), ".dovecot.sieve")); err == nil {
		active = strings.TrimSuffix(filepath.Base(target), ".sieve")
	}
	return scripts, active
}
