package imaptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// account holds the system users and groups an instance runs with.
//
// As root, Dovecot runs its internal processes as "dovecot" and its login
// processes as "dovenull" (both created by the dovecot-core package), and
// refuses uid 0 for mail: mail is owned by "nobody". Otherwise everything
// runs as the current user, as in a rootless Dovecot installation.
type account struct {
	internalUser, internalGroup string
	loginUser                   string
	mailUID, mailGID            int
}

func currentAccount() (*account, error) {
	if os.Geteuid() == 0 {
		return rootAccount()
	}
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("current user: %w", err)
	}
	g, err := user.LookupGroupId(strconv.Itoa(os.Getegid()))
	if err != nil {
		return nil, fmt.Errorf("current group: %w", err)
	}
	return &account{
		internalUser: u.Username, internalGroup: g.Name, loginUser: u.Username,
		mailUID: os.Geteuid(), mailGID: os.Getegid(),
	}, nil
}

func rootAccount() (*account, error) {
	for _, name := range []string{"dovecot", "dovenull"} {
		if _, err := user.Lookup(name); err != nil {
			return nil, fmt.Errorf("running as root, Dovecot needs the system user %q, which the dovecot-core package creates: %w", name, err)
		}
	}
	internal, _ := user.Lookup("dovecot")
	group, err := user.LookupGroupId(internal.Gid)
	if err != nil {
		return nil, fmt.Errorf("group of user dovecot: %w", err)
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root, mail is owned by user nobody, who does not exist: %w", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	return &account{
		internalUser: "dovecot", internalGroup: group.Name, loginUser: "dovenull",
		mailUID: uid, mailGID: gid,
	}, nil
}

// chown gives path to the mail owner.
func (a *account) chown(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	return os.Chown(path, a.mailUID, a.mailGID)
}

// makeDir creates the instance directory under os.TempDir(), not under
// t.TempDir(), whose 0700 parents the unprivileged Dovecot processes could
// not pass through. Dovecot's configuration syntax cannot quote every path,
// so a temp dir with blanks or quotes is refused.
func makeDir() (_ string, err error) {
	dir, err := os.MkdirTemp("", "imaptest-")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if strings.ContainsAny(dir, " \t\n\"'#\\") {
		return "", fmt.Errorf("temp dir %q has blanks or quotes, which Dovecot's configuration cannot take: set TMPDIR", dir)
	}
	if err := checkReachable(dir); err != nil {
		return "", err
	}
	for _, sub := range []string{"", "state", "users", "home"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", err
		}
		if err := os.Chmod(filepath.Join(dir, sub), 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// checkReachable fails, as root, when a parent of dir is closed to other
// users: Dovecot's unprivileged processes would fail later with a less
// clear "permission denied".
func checkReachable(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for parent := filepath.Dir(dir); ; parent = filepath.Dir(parent) {
		info, err := os.Stat(parent)
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("unprivileged Dovecot processes cannot enter %s (mode %v): set TMPDIR to a directory they can reach, such as /tmp", parent, info.Mode().Perm())
		}
		if parent == filepath.Dir(parent) {
			return nil
		}
	}
}

func removeDir(dir string) {
	if dir != "" && strings.HasPrefix(filepath.Base(dir), "imaptest-") {
		os.RemoveAll(dir)
	}
}

// findDovecot looks for the dovecot binary in PATH, then in /usr/sbin,
// which is not in every user's PATH.
func findDovecot() (string, error) {
	if bin, err := exec.LookPath("dovecot"); err == nil {
		return bin, nil
	}
	const sbin = "/usr/sbin/dovecot"
	if _, err := os.Stat(sbin); err == nil {
		return sbin, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return "", errors.New("dovecot is not installed (not in PATH nor /usr/sbin): run `.ci/system-deps dovecot` " +
		"(Debian: apt-get install dovecot-core dovecot-imapd dovecot-managesieved dovecot-sieve)")
}
