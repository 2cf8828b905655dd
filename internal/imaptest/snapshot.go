package imaptest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Snapshot returns every message file of the user's mail store, to prove
// that a migration left a source unchanged: compare a snapshot taken before
// with one taken after.
//
// The key identifies a message: the folder's directory in the store
// ("INBOX" for the root), "/", and the maildir file's base name without its
// ":2,<flags>" info part, such as
// "Projects/2024/Q1/1700000000.M1P2.host,S=1234,W=1260" (LayoutSlash) or
// ".Projects.2024.Q1/..." (LayoutDotInbox). The value is where the file
// lies ("new" or "cur"), its maildir flags ("S" is \Seen, "R" \Answered,
// "F" \Flagged, "T" \Deleted, "D" \Draft; lower-case letters are keywords)
// and the SHA-256 of its content, as in "cur:2,FS 3a7b…". So a snapshot
// changes when a message is added, removed, altered or re-flagged, and also
// when a message is taken out of new/ by a SELECT (which EXAMINE does not
// do). Dovecot's index, cache, uid-list and keyword files are left out.
func (d *Dovecot) Snapshot(t testing.TB, login string) map[string]string {
	t.Helper()
	root := filepath.Join(d.home(login), "Maildir")
	// Dovecot may rename a file (a flag change) while we walk: try again.
	var err error
	for range 3 {
		var snap map[string]string
		if snap, err = snapshot(root); err == nil {
			return snap
		}
	}
	t.Fatalf("imaptest: snapshot of %s: %v", login, err)
	return nil
}

func snapshot(root string) (map[string]string, error) {
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return fs.SkipAll // the user never logged in
			}
			return err
		}
		sub := filepath.Base(filepath.Dir(path))
		if !e.Type().IsRegular() || (sub != "new" && sub != "cur") || isDovecotFile(e.Name()) {
			return nil
		}
		folder, err := filepath.Rel(root, filepath.Dir(filepath.Dir(path)))
		if err != nil {
			return err
		}
		if folder == "." {
			folder = "INBOX"
		}
		base, info, _ := strings.Cut(e.Name(), ":")
		sum, err := fileSHA256(path)
		if err != nil {
			return err
		}
		snap[filepath.ToSlash(folder)+"/"+base] = sub + ":" + info + " " + sum
		return nil
	})
	return snap, err
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// isDovecotFile tells Dovecot's own files, which a maildir folder named
// "new" or "cur" (LayoutSlash) holds next to its children.
func isDovecotFile(name string) bool {
	return strings.HasPrefix(name, "dovecot") || name == "maildirfolder" || name == "subscriptions"
}
