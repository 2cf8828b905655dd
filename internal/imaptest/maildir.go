package imaptest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// WriteInbox writes n messages straight into login's INBOX maildir, as a
// delivery agent would, with body(i) as the i-th message: a folder of a
// million messages this way takes seconds, where APPENDs take minutes.
// Dovecot indexes them when the folder is next opened.
func (d *Dovecot) WriteInbox(t testing.TB, login string, n int, body func(i int) []byte) {
	t.Helper()
	maildir := filepath.Join(d.home(login), "Maildir")
	cur := filepath.Join(maildir, "cur")
	for _, dir := range []string{maildir, cur, filepath.Join(maildir, "new"), filepath.Join(maildir, "tmp")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatalf("imaptest: WriteInbox: %v", err)
		}
		if err := d.acct.chown(dir); err != nil {
			t.Fatalf("imaptest: WriteInbox: %v", err)
		}
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		b := body(i)
		name := fmt.Sprintf("%d.M%dP1.imaptest,S=%d:2,S", base.Unix()+int64(i), i, len(b))
		path := filepath.Join(cur, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatalf("imaptest: WriteInbox: %v", err)
		}
		if err := d.acct.chown(path); err != nil {
			t.Fatalf("imaptest: WriteInbox: %v", err)
		}
		date := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(path, date, date); err != nil { // Dovecot's INTERNALDATE
			t.Fatalf("imaptest: WriteInbox: %v", err)
		}
	}
}

// AlterStored rewrites, in place, the first stored message of login's
// INBOX (by file name) with alter, as a destination's own process (a
// virus scanner, an administrator) that changes mail after delivery
// would. The size should stay: Dovecot reads it from the file's name.
func (d *Dovecot) AlterStored(t testing.TB, login string, alter func([]byte) []byte) {
	t.Helper()
	var files []string
	for _, dir := range []string{"cur", "new"} {
		names, err := filepath.Glob(filepath.Join(d.home(login), "Maildir", dir, "*"))
		if err != nil {
			t.Fatalf("imaptest: AlterStored: %v", err)
		}
		files = append(files, names...)
	}
	if len(files) == 0 {
		t.Fatalf("imaptest: AlterStored: %s's INBOX holds no message", login)
	}
	slices.Sort(files)
	body, err := os.ReadFile(files[0])
	if err == nil {
		err = os.WriteFile(files[0], alter(body), 0o600)
	}
	if err != nil {
		t.Fatalf("imaptest: AlterStored: %v", err)
	}
}
