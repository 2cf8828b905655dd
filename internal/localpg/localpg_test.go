package localpg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

func TestStartInitialisesThenReusesCluster(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testsupport.ReachableDir(t), "postgres")

	first := startServer(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		t.Fatalf("no cluster after the first start: %v", err)
	}
	if got := queryString(t, first.URL(), "SELECT current_database()"); got != DatabaseName {
		t.Fatalf("URL connects to database %q, want %q", got, DatabaseName)
	}
	writeMarker(t, first, "kept")
	stopServer(t, first)
	if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("postmaster.pid after Stop: %v, want it removed", err)
	}

	second := startServer(t, dir)
	checkMarker(t, second, "kept")
}

func TestStartAfterPostgresCrashed(t *testing.T) {
	t.Parallel()
	// A busy backend does not notice its postmaster's death, and keeps the
	// shared memory that a new postmaster refuses to share.
	for _, busyBackend := range []bool{false, true} {
		t.Run(fmt.Sprintf("busy backend %v", busyBackend), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(testsupport.ReachableDir(t), "postgres")
			// Not Fast: without fsync and synchronous commit a crash loses
			// the last commits by design.
			crashed := startServerWith(t, Options{Dir: dir})
			writeMarker(t, crashed, "survives a crash")
			var busyDone <-chan error
			if busyBackend {
				busyDone = runEndlessQuery(t, crashed)
			}

			if err := syscall.Kill(crashed.Pid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitClosed(t, crashed.Exited(), 10*time.Second, "the killed postgres to be reaped")
			crashed.unlock() // as the kernel does for a dead mailmigrate
			if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); err != nil {
				t.Fatalf("a killed postgres should leave its pid file behind: %v", err)
			}

			restarted := startServer(t, dir)
			checkMarker(t, restarted, "survives a crash")
			if busyBackend {
				select {
				case err := <-busyDone:
					if err == nil {
						t.Fatal("the endless query ended without an error")
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the endless query's session still runs")
				}
			}
		})
	}
}

// runEndlessQuery starts a query that runs until its backend is killed:
// a loop that never waits, so never checks that its postmaster lives. The
// returned channel has the query's error.
func runEndlessQuery(t *testing.T, s *Server) <-chan error {
	t.Helper()
	ctx := context.Background()
	busy := connect(t, s.URL())
	var pid int
	if err := busy.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, "DO $$ BEGIN LOOP END LOOP; END $$")
		busy.Close(ctx)
		done <- err
	}()
	testsupport.Eventually(t, 10*time.Second, func() error {
		state := queryString(t, s.AdminURL(), fmt.Sprintf("SELECT coalesce(max(state), '') FROM pg_stat_activity WHERE pid = %d", pid))
		if state != "active" {
			return fmt.Errorf("the endless query is %q, want active", state)
		}
		return nil
	})
	return done
}

func TestStartStopsOrphanedPostgres(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testsupport.ReachableDir(t), "postgres")
	orphaned := startServer(t, dir)
	writeMarker(t, orphaned, "from the orphan")
	// mailmigrate dies: the kernel drops its flock, its postgres runs on.
	orphaned.unlock()

	next := startServer(t, dir)
	waitClosed(t, orphaned.Exited(), 30*time.Second, "the orphaned postgres to stop")
	if next.Pid() == orphaned.Pid() {
		t.Fatal("the new server has the orphan's pid")
	}
	checkMarker(t, next, "from the orphan")
}

func TestStartRemovesPidFileOfUnrelatedProcess(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testsupport.ReachableDir(t), "postgres")
	first := startServer(t, dir)
	writeMarker(t, first, "still here")
	stopServer(t, first)

	// The pid of a crashed postgres now belongs to a live, unrelated
	// process: ours. PostgreSQL itself would refuse to start.
	pidFile := filepath.Join(dir, "data", "postmaster.pid")
	body := fmt.Sprintf("%d\n%s\n", os.Getpid(), filepath.Join(dir, "data"))
	if err := os.WriteFile(pidFile, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}

	second := startServer(t, dir)
	checkMarker(t, second, "still here")
	written, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(written), "\n"); first != fmt.Sprint(second.Pid()) {
		t.Fatalf("postmaster.pid names pid %s, want the new server's %d", first, second.Pid())
	}
}

func TestStartRefusesDataDirInUse(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testsupport.ReachableDir(t), "postgres")
	running := startServer(t, dir)

	second, err := Start(context.Background(), Options{Dir: dir, Fast: true})
	if err == nil {
		stopServer(t, second)
		t.Fatal("a second Start on a data dir in use succeeded")
	}
	if !strings.Contains(err.Error(), "in use by another mailmigrate process") {
		t.Fatalf("second Start: %v, want it to say the dir is in use", err)
	}
	select {
	case <-running.Exited():
		t.Fatal("the running server stopped after a refused second Start")
	default:
	}
	writeMarker(t, running, "first still serves")
	checkMarker(t, running, "first still serves")
}

func TestStartMovesTooLongSocketPathToTempDir(t *testing.T) {
	t.Parallel()
	for _, postgresDies := range []bool{false, true} {
		t.Run(fmt.Sprintf("postgres dies first %v", postgresDies), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(testsupport.ReachableDir(t), strings.Repeat("long-", 20))
			if n := len(filepath.Join(dir, "run", ".s.PGSQL.5432.lock")); n <= 107 {
				t.Fatalf("test dir gives a %d-byte socket path: too short to test anything", n)
			}
			s := startServer(t, dir)
			if strings.HasPrefix(s.sockDir, dir) {
				t.Fatalf("socket dir %s is under the data dir, whose path is too long", s.sockDir)
			}
			if _, err := os.Stat(filepath.Join(s.sockDir, ".s.PGSQL.5432")); err != nil {
				t.Fatalf("no socket in %s: %v", s.sockDir, err)
			}
			writeMarker(t, s, "via a short socket path")
			checkMarker(t, s, "via a short socket path")
			if postgresDies {
				if err := syscall.Kill(s.Pid(), syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				waitClosed(t, s.Exited(), 10*time.Second, "the killed postgres to be reaped")
			}
			stopServer(t, s)
			if _, err := os.Stat(s.sockDir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("temp socket dir %s after Stop: %v, want it removed", s.sockDir, err)
			}
		})
	}
}

func TestFindIn(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	both := binDir(t, map[string]os.FileMode{"initdb": 0o755, "postgres": 0o755})
	alsoBoth := binDir(t, map[string]os.FileMode{"initdb": 0o755, "postgres": 0o755})
	onlyInitdb := binDir(t, map[string]os.FileMode{"initdb": 0o755})
	notExecutable := binDir(t, map[string]os.FileMode{"initdb": 0o644, "postgres": 0o644})
	tests := []struct {
		name       string
		candidates []string
		want       string // "" means ErrNoBinaries
	}{
		{"no candidates", nil, ""},
		{"empty dirs", []string{empty, t.TempDir()}, ""},
		{"missing dir", []string{filepath.Join(empty, "nope")}, ""},
		{"initdb only", []string{onlyInitdb}, ""},
		{"not executable", []string{notExecutable}, ""},
		{"both", []string{both}, both},
		{"first complete dir wins", []string{empty, onlyInitdb, both, alsoBoth}, both},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findIn(tt.candidates)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("findIn = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrNoBinaries) {
				t.Fatalf("findIn = %q, %v; want ErrNoBinaries", got, err)
			}
		})
	}
}

func TestErrNoBinariesTellsWhatToDo(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"apt-get install postgresql", "DATABASE_URL"} {
		if !strings.Contains(ErrNoBinaries.Error(), want) {
			t.Errorf("ErrNoBinaries = %q, want it to mention %q", ErrNoBinaries, want)
		}
	}
}

func TestFindBinariesFindsInstalledServer(t *testing.T) {
	t.Parallel()
	dir, err := FindBinaries()
	if err != nil {
		t.Fatalf("PostgreSQL server binaries are required to test localpg: %v", err)
	}
	for _, name := range []string{"initdb", "postgres"} {
		if !isExecutable(filepath.Join(dir, name)) {
			t.Errorf("FindBinaries = %s, which has no executable %s", dir, name)
		}
	}
}

func TestCheckReachable(t *testing.T) {
	t.Parallel()
	o, err := clusterOwner()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		// Not root: postgres runs as us, and any dir we can create will do.
		if o != nil {
			t.Fatalf("clusterOwner = %+v as non-root, want nil", o)
		}
		if err := o.checkReachable(filepath.Join(t.TempDir(), "postgres")); err != nil {
			t.Fatalf("checkReachable as non-root: %v", err)
		}
		return
	}
	base := testsupport.ReachableDir(t)
	closed := mkdir(t, filepath.Join(base, "closed"), 0o700)
	if err := o.checkReachable(filepath.Join(closed, "postgres")); err == nil ||
		!strings.Contains(err.Error(), closed) || !strings.Contains(err.Error(), o.name) {
		t.Fatalf("checkReachable below a root-only dir: %v, want an error naming %s and user %s", err, closed, o.name)
	}
	open := mkdir(t, filepath.Join(base, "open"), 0o755)
	if err := o.checkReachable(filepath.Join(open, "postgres")); err != nil {
		t.Fatalf("checkReachable below a 0755 dir: %v", err)
	}
	owned := mkdir(t, filepath.Join(base, "owned"), 0o700)
	if err := o.chown(owned); err != nil {
		t.Fatal(err)
	}
	if err := o.checkReachable(filepath.Join(owned, "postgres")); err != nil {
		t.Fatalf("checkReachable below a 0700 dir the owner owns: %v", err)
	}

	// Start reports it before touching the cluster.
	_, err = Start(context.Background(), Options{Dir: filepath.Join(closed, "postgres"), Fast: true})
	if err == nil || !strings.Contains(err.Error(), closed) {
		t.Fatalf("Start below a root-only dir: %v, want an error naming %s", err, closed)
	}
}

func mkdir(t *testing.T, dir string, perm os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(dir, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil { // umask
		t.Fatal(err)
	}
	return dir
}

// binDir returns a directory holding empty files with the given modes.
func binDir(t *testing.T, files map[string]os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	for name, mode := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // umask
			t.Fatal(err)
		}
	}
	return dir
}

// startServer starts the cluster in dir, in Fast mode, and stops it when
// the test ends.
func startServer(t *testing.T, dir string) *Server {
	t.Helper()
	return startServerWith(t, Options{Dir: dir, Fast: true})
}

func startServerWith(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		// The backends of a killed postmaster exit once they notice; a
		// failed test may leave some that never will.
		var pids []int
		if !testsupport.Poll(10*time.Second, func() bool { pids = s.clusterProcesses(); return len(pids) == 0 }) {
			t.Errorf("processes %v still serve %s after Stop; killing them", pids, s.dataDir)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // it may have exited
			}
		}
	})
	return s
}

func stopServer(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	waitClosed(t, s.Exited(), time.Second, "Exited after Stop")
}

func waitClosed(t *testing.T, ch <-chan struct{}, timeout time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(timeout):
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// writeMarker stores text in the application database.
func writeMarker(t *testing.T, s *Server, text string) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, s.URL())
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS marker (text text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO marker (text) VALUES ($1)", text); err != nil {
		t.Fatal(err)
	}
}

// checkMarker fails unless text is the only thing writeMarker stored.
func checkMarker(t *testing.T, s *Server, want string) {
	t.Helper()
	if got := queryString(t, s.URL(), "SELECT string_agg(text, ',') FROM marker"); got != want {
		t.Fatalf("marker table holds %q, want %q", got, want)
	}
}

func queryString(t *testing.T, url, query string) string {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, url)
	defer conn.Close(ctx)
	var got string
	if err := conn.QueryRow(ctx, query).Scan(&got); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return got
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	return conn
}
