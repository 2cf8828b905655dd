package main

import "os"

// openDataDir creates the service's data dir, or opens an existing one,
// so that the private PostgreSQL can reach its cluster in it: run as
// root, the service runs the cluster as the postgres account. The dir
// becomes passable, not listable (0711); the keys and the token in it
// stay 0600 each, and the cluster's dir is PostgreSQL's alone. A data dir
// made 0700 (by hand, or by a start with DATABASE_URL, which writes the
// key and token there) would otherwise stop a later start without it. It
// says whether it opened an existing dir.
func openDataDir(dir string) (bool, error) {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return false, err
	}
	if os.Geteuid() != 0 {
		return false, nil // the cluster runs as this user
	}
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm()&0o011 == 0o011 {
		return false, err
	}
	return true, os.Chmod(dir, info.Mode().Perm()|0o011)
}
