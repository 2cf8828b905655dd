package localpg

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// owner is the unprivileged account the cluster runs as when the service
// runs as root: PostgreSQL refuses to run as root.
type owner struct {
	name     string
	uid, gid uint32
}

// clusterOwner returns nil when the service is not root (the cluster runs
// as the current user), else the postgres account, or nobody without one.
func clusterOwner() (*owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &owner{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root, and neither a postgres nor a nobody account exists to run PostgreSQL as")
}

func (o *owner) credential() *syscall.Credential {
	if o == nil {
		return nil
	}
	return &syscall.Credential{Uid: o.uid, Gid: o.gid}
}

// chown gives path to the owner; a no-op when not root.
func (o *owner) chown(path string) error {
	if o == nil {
		return nil
	}
	return os.Chown(path, int(o.uid), int(o.gid))
}

// mkdirAll creates dir and its missing parents, private to the current
// user (0700). As root, the parents it creates are 0711 instead: the
// postgres account may pass through them to the cluster but not list them.
func (o *owner) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if o == nil || len(missing) < 2 {
		return nil
	}
	for _, parent := range missing[1:] {
		if err := os.Chmod(parent, 0o711); err != nil {
			return err
		}
	}
	return nil
}

// checkReachable fails when the owner cannot walk down to dir, as happens
// for a data dir under /root: PostgreSQL would fail later with a less clear
// "permission denied".
func (o *owner) checkReachable(dir string) error {
	if o == nil {
		return nil
	}
	for parent := filepath.Dir(dir); ; parent = filepath.Dir(parent) {
		info, err := os.Stat(parent)
		if err != nil {
			return err
		}
		if !o.canTraverse(info) {
			return fmt.Errorf("PostgreSQL runs as user %s, who cannot enter %s: let it pass (chmod o+x %s), or choose a data dir that user can reach, e.g. --data-dir /var/lib/mailmigrate", o.name, parent, parent)
		}
		if parent == filepath.Dir(parent) {
			return nil
		}
	}
}

func (o *owner) canTraverse(info os.FileInfo) bool {
	perm := info.Mode().Perm()
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return perm&0o001 != 0
	}
	switch {
	case st.Uid == o.uid:
		return perm&0o100 != 0
	case st.Gid == o.gid:
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}
