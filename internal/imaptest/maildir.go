package imaptest

import (
	"fmt"
	"os"
	"path/filepath"
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
