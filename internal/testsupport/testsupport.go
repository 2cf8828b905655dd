// Package testsupport holds the small helpers that the tests of several
// packages share: polling for a condition, a log buffer that goroutines may
// write while the test reads it, and a directory that the service accounts
// of PostgreSQL and Dovecot can reach. The harnesses with servers of their
// own are dbtest, imaptest and servicetest.
package testsupport

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// pollInterval is how often Poll and Eventually look: short beside the
// seconds the conditions take, long enough not to load a 2-core machine.
const pollInterval = 20 * time.Millisecond

// Poll calls done until it reports true or timeout passes, and says
// whether it did.
func Poll(timeout time.Duration, done func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}

// Eventually calls check until it returns nil, and fails t with check's
// last error when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	var err error
	if !Poll(timeout, func() bool { err = check(); return err == nil }) {
		t.Fatalf("still, after %s: %v", timeout, err)
	}
}

// SyncBuffer is a bytes.Buffer that a server goroutine or a child's output
// copier may write while the test reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ReachableDir returns a new directory that the postgres account can reach
// when the tests run as root: t.TempDir's parents are mode 0700. It is
// removed when the test ends, after what cleanups registered later stop.
func ReachableDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mailmigrate-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// GetPage fetches a page as a browser would, and returns its status and
// body.
func GetPage(t testing.TB, address string) (int, string) {
	t.Helper()
	resp, err := http.Get(address)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
