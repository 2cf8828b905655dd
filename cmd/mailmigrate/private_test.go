package main

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// TestServePrivateDatabase runs mailmigrate as a process without
// DATABASE_URL, so that it runs its own PostgreSQL, and checks that data
// outlives a clean stop and a SIGKILL of the service.
func TestServePrivateDatabase(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := testsupport.ReachableDir(t)
	pgData := filepath.Join(dataDir, "postgres", "data")
	t.Cleanup(func() { stopStrayPostgres(t, pgData) })
	// A clean environment: no DATABASE_URL or MAILMIGRATE_* from ours.
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"MAILMIGRATE_DATA_DIR=" + dataDir,
		runMainEnv + "=1",
	}
	first := startService(t, exe, env, 60*time.Second) // runs initdb
	id := createEndpoint(t, first.client(), first.base, "imap.example")
	first.terminate(t)
	checkPostgresStopped(t, pgData)

	second := startService(t, exe, env, 30*time.Second)
	if second.token != first.token {
		t.Error("the service made a new API token at a restart; the one in the data dir should stay")
	}
	if !listsEndpoint(t, second.client(), second.base, id, "imap.example") {
		t.Fatalf("endpoint %d is gone after a restart", id)
	}
	second.kill(t)

	third := startService(t, exe, env, 60*time.Second)
	if !listsEndpoint(t, third.client(), third.base, id, "imap.example") {
		t.Fatalf("endpoint %d is gone after the service was killed", id)
	}
	third.terminate(t)
	checkPostgresStopped(t, pgData)
}

// service is a mailmigrate serve process.
type service struct {
	cmd    *exec.Cmd
	output *testsupport.SyncBuffer
	exited chan struct{}
	base   string // http://host:port
	token  string // the API token the service made for itself
}

// client is an HTTP client that sends the service's token.
func (s *service) client() *http.Client {
	return bearerClient(s.token)
}

// startService runs `mailmigrate serve` and waits until it listens. The
// process is killed, if still running, when the test ends.
func startService(t *testing.T, exe string, env []string, timeout time.Duration) *service {
	t.Helper()
	s := &service{output: &testsupport.SyncBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(exe, "serve", "--listen", "127.0.0.1:0")
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = s.output, s.output
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait() //nolint:errcheck // ProcessState has the outcome
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill() //nolint:errcheck // it may have exited
		<-s.exited
	})
	s.base = waitListening(t, s.output, s.exited, timeout)
	s.token = readLocalToken(t, dataDirOf(env))
	return s
}

// terminate sends SIGTERM and expects a clean exit.
func (s *service) terminate(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 30*time.Second)
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("mailmigrate exited %d after SIGTERM, want 0; output:\n%s", code, s.output)
	}
	if !strings.Contains(s.output.String(), "msg=stopped") {
		t.Fatalf("mailmigrate did not log that it stopped; output:\n%s", s.output)
	}
}

// kill sends SIGKILL, as an OOM killer or `kill -9` would.
func (s *service) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 10*time.Second)
}

func (s *service) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(timeout):
		t.Fatalf("mailmigrate did not exit within %s; output:\n%s", timeout, s.output)
	}
}

// checkPostgresStopped fails if a postgres still serves pgData.
func checkPostgresStopped(t *testing.T, pgData string) {
	t.Helper()
	if pids := processesIn(pgData); len(pids) > 0 {
		t.Errorf("processes %v still run in %s after mailmigrate stopped", pids, pgData)
	}
	if _, err := os.Stat(filepath.Join(pgData, "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("postmaster.pid after mailmigrate stopped: %v, want it removed", err)
	}
}

// stopStrayPostgres shuts down whatever still runs in pgData, so that a
// failed test leaves no server behind.
func stopStrayPostgres(t *testing.T, pgData string) {
	t.Helper()
	pids := processesIn(pgData)
	if len(pids) > 0 {
		t.Errorf("processes %v were left running in %s; stopping them", pids, pgData)
	}
	signal := syscall.SIGINT // fast shutdown
	deadline := time.Now().Add(10 * time.Second)
	for ; len(pids) > 0; pids = processesIn(pgData) {
		if time.Now().After(deadline) {
			signal = syscall.SIGKILL
		}
		for _, pid := range pids {
			syscall.Kill(pid, signal) //nolint:errcheck // it may have exited
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// processesIn lists the live processes whose working directory is dir, as
// a postgres server's and its backends' is their data dir.
func processesIn(dir string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, proc := range procs {
		if cwd, err := os.Readlink(filepath.Join(proc, "cwd")); err == nil && cwd == dir {
			pid, _ := strconv.Atoi(filepath.Base(proc))
			pids = append(pids, pid)
		}
	}
	return pids
}
