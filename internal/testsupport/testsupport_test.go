package testsupport

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	t.Parallel()
	calls := 0
	if !Poll(time.Minute, func() bool { calls++; return calls == 3 }) {
		t.Fatal("Poll gave up on a condition that came true")
	}
	if calls != 3 {
		t.Errorf("%d calls, want 3: Poll must stop once the condition holds", calls)
	}
	start := time.Now()
	if Poll(100*time.Millisecond, func() bool { return false }) {
		t.Error("Poll reported a condition that never held")
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("Poll gave up after %s, before its timeout", waited)
	}
}

// recorder is a testing.TB that keeps what Fatalf said.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func TestEventuallyFailsWithTheLastError(t *testing.T) {
	t.Parallel()
	var r recorder
	n := 0
	Eventually(&r, 50*time.Millisecond, func() error { n++; return fmt.Errorf("state %d", n) })
	if want := fmt.Sprintf("state %d", n); !strings.HasSuffix(r.fatal, want) {
		t.Errorf("failed with %q, want the last error %q", r.fatal, want)
	}
	// A condition that holds at once never fails.
	r = recorder{}
	Eventually(&r, time.Minute, func() error { return nil })
	if r.fatal != "" {
		t.Errorf("failed with %q on a condition that held", r.fatal)
	}
}

func TestSyncBufferTakesConcurrentWrites(t *testing.T) {
	t.Parallel()
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x")) //nolint:errcheck // never fails
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := len(b.String()); got != 800 {
		t.Errorf("%d bytes, want 800", got)
	}
}

func TestReachableDir(t *testing.T) {
	t.Parallel()
	var dir string
	t.Run("made", func(t *testing.T) {
		dir = ReachableDir(t)
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o755 {
			t.Errorf("mode %v, want 0755", info.Mode().Perm())
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after its test: %v", dir, err)
	}
}
