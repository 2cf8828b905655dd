package imaptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// AddUser creates a user with an empty mailbox; it can log in at once,
// also while the server runs.
func (d *Dovecot) AddUser(t testing.TB, login, password string) {
	t.Helper()
	if err := d.addUser(login, password); err != nil {
		t.Fatalf("imaptest: %v", err)
	}
}

// addUser writes the user's passwd-file (see the passdb in config.go) and
// creates their home, owned by the mail user.
func (d *Dovecot) addUser(login, password string) error {
	if err := checkCredentials(login, password); err != nil {
		return err
	}
	d.usersMu.Lock()
	defer d.usersMu.Unlock()
	path := filepath.Join(d.Dir, "users", login)
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("user %q exists already", login)
	}
	home := d.home(login)
	if err := os.Mkdir(home, 0o700); err != nil {
		return err
	}
	if err := d.acct.chown(home); err != nil {
		return err
	}
	// passwd(5) fields: user:password:uid:gid:gecos:home:shell:extra.
	line := fmt.Sprintf("%s:{PLAIN}%s:%d:%d::%s::\n", login, password, d.acct.mailUID, d.acct.mailGID, home)
	// Written aside and renamed, so that the auth process never reads
	// half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(line), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d.passwords[login] = password
	return nil
}

// writeMasters writes the master passdb's file (see config.go), of
// login:{PLAIN}password lines.
func (d *Dovecot) writeMasters(masters map[string]string) error {
	if len(masters) == 0 {
		return nil
	}
	var lines strings.Builder
	for _, login := range sortedKeys(masters) {
		if err := checkCredentials(login, masters[login]); err != nil {
			return err
		}
		fmt.Fprintf(&lines, "%s:{PLAIN}%s\n", login, masters[login])
	}
	d.masterUsers = true
	return os.WriteFile(filepath.Join(d.Dir, "masters"), []byte(lines.String()), 0o644)
}

func (d *Dovecot) password(login string) (string, bool) {
	d.usersMu.Lock()
	defer d.usersMu.Unlock()
	pw, ok := d.passwords[login]
	return pw, ok
}

func (d *Dovecot) home(login string) string {
	return filepath.Join(d.Dir, "home", login)
}

// checkCredentials refuses what a passwd-file line or a path cannot hold.
func checkCredentials(login, password string) error {
	switch {
	case login == "" || login == "." || login == "..":
		return fmt.Errorf("invalid login %q", login)
	case strings.ContainsAny(login, ":/\\% \t\r\n\x00") || strings.HasSuffix(login, ".tmp"):
		return fmt.Errorf("login %q: no blanks, ':', '/', '\\' or '%%' here", login)
	case strings.ContainsAny(password, ":\r\n\x00"):
		return errors.New("a password cannot contain ':', CR, LF or NUL here")
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
