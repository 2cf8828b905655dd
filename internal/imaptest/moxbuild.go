package imaptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MoxVersion is the mox release StartMox runs, built from the Go module
// proxy: the newest it served when chosen (April 2025), and one that
// builds with the Go of go.mod. mox is no dependency of this module (go.mod
// does not name it): it is built aside, once per machine, and kept in the
// user's cache directory.
const MoxVersion = "v0.0.15"

// moxBuildTimeout bounds a first build: about a minute with the module
// downloads, on two cores.
const moxBuildTimeout = 10 * time.Minute

// builtMox builds mox at most once per test binary, so that a failed build
// (no module proxy) fails every test at once instead of being
// tried again, a minute each, by every test that starts a mox.
var builtMox = sync.OnceValues(func() (string, error) {
	return buildMox(moxCacheDir())
})

// moxBinary returns the path of the mox binary of MoxVersion, building it
// on first use. A failed build fails t, as a missing Dovecot does: no test
// is skipped because a server is missing.
func moxBinary(t testing.TB) string {
	t.Helper()
	bin, err := builtMox()
	if err != nil {
		t.Fatalf("imaptest: mox %s is needed and could not be built from the Go module proxy: %v", MoxVersion, err)
	}
	return bin
}

// moxCacheDir is where built binaries are kept across test runs.
func moxCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "mailmigrate-imaptest")
	}
	return filepath.Join(os.TempDir(), "mailmigrate-imaptest-cache")
}

// buildMox returns cache/mox-<version>/mox, building it first when it is
// not there. A file lock keeps the test binaries of `go test ./...`, which
// run in parallel, from building it at the same time: the ones that wait
// find it built.
func buildMox(cache string) (_ string, err error) {
	dir := filepath.Join(cache, "mox-"+MoxVersion)
	bin := filepath.Join(dir, "mox")
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(bin) {
		return bin, nil
	}
	if err := goBuildMox(dir, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// goBuildMox builds mox into bin, from a throwaway module that requires
// it. `go install github.com/mjl-/mox@version` would be shorter, but it
// also asks the proxy for mox's list of versions, to report a
// deprecation, which a proxy that serves pinned versions only refuses.
// The binary is written aside and renamed, so that it is never seen half
// written.
func goBuildMox(dir, bin string) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("mox is built from source and go is not in PATH: %w", err)
	}
	mod, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mod)
	gomod := "module mailmigrate.invalid/moxbuild\n\ngo 1.23\n\nrequire github.com/mjl-/mox " + MoxVersion + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), moxBuildTimeout)
	defer cancel()
	tmp := filepath.Join(mod, "mox")
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", tmp, "github.com/mjl-/mox")
	cmd.Dir = mod
	// Not this module's flags nor workspace: -mod=mod lets go add mox's
	// dependencies to the throwaway go.sum, checked against the checksum
	// database as usual.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build github.com/mjl-/mox@%s: %v\n%s", MoxVersion, err, bytes.TrimSpace(out.Bytes()))
	}
	return os.Rename(tmp, bin)
}

// lockFile takes an exclusive flock(2) on path, waiting for it, and
// returns its release.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}
