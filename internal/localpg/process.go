package localpg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// recoverStale deals with a postmaster.pid left by a run that was killed.
// We hold the data dir's lock, so no live mailmigrate owns the cluster: a
// postgres still serving it is an orphan and is shut down; a pid file that
// names no such process is removed, since PostgreSQL refuses to start when
// the pid has been reused by an unrelated process.
func (s *Server) recoverStale() error {
	pidFile := filepath.Join(s.dataDir, "postmaster.pid")
	body, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(body), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return os.Remove(pidFile)
	}
	if s.servesOurCluster(pid) {
		s.logger.Warn("stopping a PostgreSQL left running by an earlier run", "pid", pid)
		return stopPid(pid, 30*time.Second)
	}
	if err := s.stopOrphanedBackends(2 * time.Second); err != nil {
		return err
	}
	s.logger.Warn("removing stale PostgreSQL lock file", "pid", pid)
	return os.Remove(pidFile)
}

// stopOrphanedBackends waits for the children of a postmaster that was
// killed to notice and exit: they keep its shared memory attached, and a
// new postmaster refuses to start while they do. Stragglers, busy in a long
// query, get SIGQUIT and then SIGKILL, each after wait.
func (s *Server) stopOrphanedBackends(wait time.Duration) error {
	signals := []syscall.Signal{syscall.SIGQUIT, syscall.SIGKILL}
	deadline := time.Now().Add(wait)
	for pids := s.clusterProcesses(); len(pids) > 0; pids = s.clusterProcesses() {
		if time.Now().After(deadline) {
			if len(signals) == 0 {
				return fmt.Errorf("processes %v of an earlier PostgreSQL in %s do not exit", pids, s.dataDir)
			}
			s.logger.Warn("stopping processes of an earlier PostgreSQL", "pids", pids, "signal", signals[0])
			for _, pid := range pids {
				syscall.Kill(pid, signals[0]) //nolint:errcheck // it may have exited
			}
			signals, deadline = signals[1:], time.Now().Add(wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// clusterProcesses lists the live postgres processes serving our data dir.
func (s *Server) clusterProcesses() []int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, proc := range procs {
		if pid, err := strconv.Atoi(filepath.Base(proc)); err == nil && s.servesOurCluster(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// servesOurCluster reports whether pid is a live postgres whose working
// directory is our data dir (postgres chdirs into it).
func (s *Server) servesOurCluster(pid int) bool {
	if !alive(pid) {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || filepath.Base(exe) != "postgres" {
		return false
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	return err == nil && cwd == s.dataDir
}

// stopPid asks pid for a fast shutdown and escalates to SIGKILL after wait.
func stopPid(pid int, wait time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
		return nil // already gone
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // best effort after a timeout
	return nil
}

// alive reports whether pid runs. A zombie does not: an orphan that
// exited waits for init to reap it, which can take seconds.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name (proc(5)).
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// launch starts postgres as a child. It gets its own process group so that
// a terminal's Ctrl-C reaches only mailmigrate, which drains its requests
// before stopping the database; Pdeathsig stops it should we be killed.
func (s *Server) launch(binDir string, fast bool) error {
	args := []string{
		"-D", s.dataDir,
		"-p", strconv.Itoa(socketPort),
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories=" + s.sockDir,
		"-c", "unix_socket_permissions=0700",
		"-c", "max_connections=200",
	}
	if fast {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own copy
	cmd := exec.Command(filepath.Join(binDir, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: s.cmdOwner.credential(),
		Setpgid:    true,
		Pdeathsig:  syscall.SIGINT,
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	go func() {
		s.waitErr = cmd.Wait()
		close(exited)
	}()
	return nil
}

// waitReady polls until the server accepts connections, then makes sure
// the application database exists.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.dsn("postgres"))
		if err == nil {
			defer conn.Close(context.WithoutCancel(ctx))
			return ensureDatabase(ctx, conn)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%w (%v): %s", errExited, s.waitErr, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections within %s: %s", timeout, s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func ensureDatabase(ctx context.Context, conn *pgx.Conn) error {
	var exists bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, DatabaseName).Scan(&exists)
	if err != nil || exists {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{DatabaseName}.Sanitize())
	return err
}

func (s *Server) logTail() string {
	body, _ := os.ReadFile(s.logPath)
	if i := bytes.LastIndex(body, []byte("starting PostgreSQL")); i > 0 {
		body = body[i:]
	}
	return lastLines(string(body), 5)
}

// dsn returns a keyword/value connection string for database name.
func (s *Server) dsn(name string) string {
	quote := func(v string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
	}
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		quote(s.sockDir), socketPort, quote(userName), quote(name))
}

// URL is the connection string of the application database.
func (s *Server) URL() string { return s.dsn(DatabaseName) }

// AdminURL is the connection string of the maintenance database "postgres",
// for creating and dropping databases.
func (s *Server) AdminURL() string { return s.dsn("postgres") }

// Exited is closed when the server process ends, expectedly or not.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Stop shuts the server down (fast shutdown: open sessions are ended,
// committed data is safe) and releases the data dir.
func (s *Server) Stop(ctx context.Context) error {
	defer s.release()
	if s.cmd == nil {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	default:
	}
	s.cmd.Process.Signal(syscall.SIGINT) //nolint:errcheck // Wait reports the outcome
	select {
	case <-s.exited:
	case <-ctx.Done():
		s.cmd.Process.Kill() //nolint:errcheck // last resort
		<-s.exited
		return ctx.Err()
	case <-time.After(30 * time.Second):
		s.cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // immediate shutdown
		<-s.exited
	}
	return nil
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }
