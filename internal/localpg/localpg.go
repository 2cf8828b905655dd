// Package localpg runs the private PostgreSQL cluster that mailmigrate uses
// when no DATABASE_URL is given: initdb on first start, a postgres server
// listening on a unix socket only, recovery from a killed earlier run, and
// a clean shutdown.
package localpg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Database and user that the cluster is initialised with.
const (
	DatabaseName = "mailmigrate"
	userName     = "mailmigrate"
	socketPort   = 5432
)

// Options configure Start.
type Options struct {
	// Dir holds the cluster, its socket and its log; created when missing.
	Dir string
	// Fast trades crash safety for speed (no fsync): for tests only.
	Fast bool
	// ReadyTimeout bounds the wait for the server to accept connections.
	ReadyTimeout time.Duration
	Logger       *slog.Logger
}

// Server is a running private cluster.
type Server struct {
	dir     string
	dataDir string
	sockDir string
	logPath string
	lock    *os.File
	// cmdOwner is the account postgres runs as; nil for the current user.
	cmdOwner *owner
	cmd      *exec.Cmd
	exited   chan struct{}
	waitErr  error
	logger   *slog.Logger
}

// Start brings the cluster in opts.Dir up, creating it on first use, and
// returns once it accepts connections.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = time.Minute
	}
	binDir, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		dir:     dir,
		dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "postgres.log"),
		exited:  make(chan struct{}),
		logger:  opts.Logger,
	}
	if err := s.prepare(binDir); err != nil {
		s.release()
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		if err := s.launch(binDir, opts.Fast); err != nil {
			s.release()
			return nil, err
		}
		err := s.waitReady(ctx, opts.ReadyTimeout)
		if err == nil {
			return s, nil
		}
		// A killed postgres's last children may still be exiting, their
		// shared memory attached: wait for them and start again.
		if attempt < 3 && errors.Is(err, errExited) && strings.Contains(s.logTail(), sharedMemoryInUse) {
			if err := s.stopOrphanedBackends(2 * time.Second); err != nil {
				s.release()
				return nil, err
			}
			time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
			continue
		}
		s.Stop(context.WithoutCancel(ctx)) //nolint:errcheck // the start error matters more
		return nil, err
	}
}

// sharedMemoryInUse is how postgres refuses to start while processes of
// an earlier postmaster of its data dir hold its shared memory.
const sharedMemoryInUse = "pre-existing shared memory block"

// prepare takes the data dir's lock, initialises the cluster when needed
// and clears what a killed earlier run left behind.
func (s *Server) prepare(binDir string) error {
	pgOwner, err := clusterOwner()
	if err != nil {
		return err
	}
	if err := pgOwner.mkdirAll(s.dir); err != nil {
		return err
	}
	if err := pgOwner.checkReachable(s.dir); err != nil {
		return err
	}
	if err := s.takeLock(); err != nil {
		return err
	}
	if err := pgOwner.chown(s.dir); err != nil {
		return err
	}
	if err := s.initCluster(binDir, pgOwner); err != nil {
		return err
	}
	if err := s.makeSocketDir(pgOwner); err != nil {
		return err
	}
	s.cmdOwner = pgOwner
	return s.recoverStale()
}

// takeLock holds an exclusive flock on the data dir for the life of the
// server. The kernel drops it when the process dies, so holding it proves
// that no other live mailmigrate uses this cluster.
func (s *Server) takeLock() error {
	f, err := os.OpenFile(filepath.Join(s.dir, "mailmigrate.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("the database in %s is in use by another mailmigrate process", s.dir)
	}
	s.lock = f
	return nil
}

func (s *Server) unlock() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// release removes a temp socket dir and gives up the data dir's lock: what
// Stop and a failed Start leave undone once postgres is not running.
func (s *Server) release() {
	if s.sockDir != "" && s.sockDir != filepath.Join(s.dir, "run") {
		os.RemoveAll(s.sockDir)
	}
	s.unlock()
}

// initCluster runs initdb into a scratch directory and renames it into
// place, so that an interrupted first start never leaves half a cluster.
func (s *Server) initCluster(binDir string, pgOwner *owner) error {
	if _, err := os.Stat(filepath.Join(s.dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	scratch := s.dataDir + ".init"
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	s.logger.Info("initialising private PostgreSQL cluster", "dir", s.dataDir)
	cmd := exec.Command(filepath.Join(binDir, "initdb"),
		"-D", scratch, "-U", userName, "-A", "trust", "-E", "UTF8", "--no-locale")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pgOwner.credential()}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, lastLines(string(out), 5))
	}
	return os.Rename(scratch, s.dataDir)
}

// makeSocketDir picks where the server's unix socket lives: beside the
// cluster, or in a private temp dir when that path is too long for a
// socket address (108 bytes on Linux).
func (s *Server) makeSocketDir(pgOwner *owner) error {
	s.sockDir = filepath.Join(s.dir, "run")
	if len(s.sockDir)+len("/.s.PGSQL.5432.lock") > 100 {
		dir, err := os.MkdirTemp("", "mailmigrate-pg-")
		if err != nil {
			return err
		}
		s.sockDir = dir
	} else if err := os.MkdirAll(s.sockDir, 0o700); err != nil {
		return err
	}
	return pgOwner.chown(s.sockDir)
}

// lastLines returns the last n lines of text, for error messages.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// errExited reports a server that stopped before it was ready.
var errExited = errors.New("postgres exited")
