package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/localpg"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// serve runs the service until ctx ends, then lets in-flight requests finish.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := parseConfig("serve", args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := cfg.logger(stderr)
	tuneGC(getenv)
	if path := getenv("MAILMIGRATE_CPU_PROFILE"); path != "" {
		stop, err := profileCPU(path)
		if err != nil {
			return err
		}
		defer stop()
		logger.Info("writing a CPU profile until the service stops", "file", path)
	}
	// Checked before anything starts, so that a refused exposure costs
	// nothing and says only that.
	token, err := loadAPIToken(cfg)
	if err != nil {
		return err
	}
	mail, err := cfg.mailServer()
	if err != nil {
		return err
	}
	exposed, err := checkExposure(cfg.Listen, cfg.InsecureNoAuth)
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.close()
	if err := migrateSchema(ctx, db.pool, logger); err != nil {
		return err
	}
	box, err := openSecretBox(ctx, cfg, db.pool, logger)
	if err != nil {
		return err
	}
	var ownToken string
	if token == "" && !cfg.InsecureNoAuth {
		if ownToken, err = localToken(ctx, cfg.DataDir, db.pool, logger); err != nil {
			return err
		}
	}
	service, err := app.Start(db.pool, box, logger, app.Config{
		MaxWorkers:    cfg.Workers,
		LeaseExpiry:   cfg.LeaseExpiry,
		WorkerID:      cfg.WorkerID,
		AttemptLimits: migration.AttemptLimits{ConnectionsPerHost: cfg.ConnectionsPerHost},
		Workers:       worker.Options{LeaseRenewal: cfg.LeaseExpiry / 6, LoginFailureLimit: cfg.loginFailureLimit()},
		Delivery:      delivery.Options{AllowedHosts: cfg.WebhookAllowedHosts},
		APIToken:      token,
		Limits:        cfg.limits(),

		DatabaseTokens: !cfg.InsecureNoAuth,
		AllowedHosts:   cfg.AllowedHosts,
		Mail:           mail,
		AuditRetention: cfg.AuditRetention,
	})
	if err != nil {
		return err
	}
	if mail != nil {
		logger.Info("tasks may mail their summaries", "smtp", mail.Address(), "from", mail.From)
	}
	defer stopService(service, cfg.ShutdownTimeout, logger)
	listener, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := httpServer(cfg, service.Handler, logger)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(listener) }()
	logger.Info("listening", "url", "http://"+listener.Addr().String(), "docs", "http://"+listener.Addr().String()+"/docs/",
		"api_token_required", !cfg.InsecureNoAuth)
	switch {
	case exposed:
		logger.Warn("serving the API without authentication on a non-loopback address (--insecure-no-auth)")
	case cfg.InsecureNoAuth:
		logger.Warn("serving the API without authentication (--insecure-no-auth): every local user and program can use it")
	case ownToken != "":
		showSignIn(stderr, logger, listener.Addr(), ownToken, cfg.DataDir)
	}

	select {
	case err := <-served:
		return err
	case <-db.exited():
		srv.Close()
		return errors.New("the private PostgreSQL stopped unexpectedly; see postgres.log in the data dir")
	case <-ctx.Done():
	}
	logger.Info("shutting down: letting in-flight requests finish", "timeout", cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// httpServer is the HTTP server of the settings. ReadHeaderTimeout and
// IdleTimeout apply to every connection; the whole-request read and write
// deadlines are set per route by the handler (httpapi.Limits), because the
// event stream must outlive them.
func httpServer(cfg config, handler http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

func stopService(service *app.App, timeout time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := service.Stop(ctx); err != nil {
		logger.Warn("background jobs did not stop in time; they resume on the next start", "err", err)
	}
}

// migrate applies the schema migrations and exits.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig("migrate", args, getenv, stderr)
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, cfg.logger(stderr))
	if err != nil {
		return err
	}
	defer db.close()
	applied, err := postgres.Migrate(ctx, db.pool)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "applied %d migrations; the schema is current\n", applied)
	return nil
}

func migrateSchema(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	applied, err := postgres.Migrate(ctx, pool)
	if err != nil {
		return err
	}
	if applied > 0 {
		logger.Info("applied schema migrations", "count", applied)
	}
	return nil
}

// database is the pool and, without DATABASE_URL, the private cluster.
type database struct {
	pool  *pgxpool.Pool
	local *localpg.Server
}

func openDatabase(ctx context.Context, cfg config, logger *slog.Logger) (*database, error) {
	db := &database{}
	url := cfg.DatabaseURL
	if url == "" {
		opened, err := openDataDir(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		if opened {
			logger.Info("the data dir is now passable (mode 0711) for the private PostgreSQL, which runs as another user; its files stay private", "dir", cfg.DataDir)
		}
		dir := filepath.Join(cfg.DataDir, "postgres")
		logger.Info("starting private PostgreSQL", "dir", dir)
		local, err := localpg.Start(ctx, localpg.Options{Dir: dir, Logger: logger})
		if err != nil {
			return nil, err
		}
		db.local, url = local, local.URL()
	}
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		db.close()
		return nil, fmt.Errorf("database: %w", err)
	}
	db.pool = pool
	return db, nil
}

// exited is closed if the private cluster stops; never for an external one.
func (db *database) exited() <-chan struct{} {
	if db.local == nil {
		return nil
	}
	return db.local.Exited()
}

func (db *database) close() {
	if db.pool != nil {
		db.pool.Close()
	}
	if db.local != nil {
		db.local.Stop(context.Background()) //nolint:errcheck // shutting down
	}
}

// serviceGCPercent is the garbage collector's target the service runs
// with unless GOGC says otherwise: the heap may grow to three times what is
// live, not twice, between collections. The service's live heap is small
// (tens of MiB), and its requests and attempts allocate much that dies at
// once: side by side, it saved 7 % of the service's CPU on average under
// 200 API clients and 7 % on a first copy of small accounts, for 5 MiB
// more at the peak (docs/operations.md).
const serviceGCPercent = 200

// tuneGC sets the collector's target to serviceGCPercent, unless the
// environment's GOGC sets one (the runtime has applied it).
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serviceGCPercent)
	}
}

// profileCPU writes the process's CPU profile to path until stop: for
// finding where the service's time goes (docs/operations.md).
func profileCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("MAILMIGRATE_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("MAILMIGRATE_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
