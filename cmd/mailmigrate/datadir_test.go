package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpenDataDir: a new data dir is made passable and not listable; as
// root, one made 0700 before (by hand, or by a start with DATABASE_URL)
// is opened once, so that the private PostgreSQL, run as another user,
// reaches its cluster in it.
func TestOpenDataDir(t *testing.T) {
	t.Parallel()
	fresh := filepath.Join(t.TempDir(), "new")
	if opened, err := openDataDir(fresh); err != nil || opened {
		t.Fatalf("a new dir: opened %t, %v", opened, err)
	}
	if info, err := os.Stat(fresh); err != nil || info.Mode().Perm() != 0o711 {
		t.Fatalf("a new dir: %v, mode %v; want 0711", err, info.Mode().Perm())
	}
	if os.Geteuid() != 0 {
		return // the cluster runs as this user: a closed dir is no obstacle
	}
	closed := filepath.Join(t.TempDir(), "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	if opened, err := openDataDir(closed); err != nil || !opened {
		t.Fatalf("a 0700 dir: opened %t, %v; want it opened", opened, err)
	}
	if info, _ := os.Stat(closed); info.Mode().Perm() != 0o711 {
		t.Errorf("a 0700 dir became %v, want 0711", info.Mode().Perm())
	}
	if opened, err := openDataDir(closed); err != nil || opened {
		t.Errorf("opened again: %t, %v", opened, err)
	}
}
