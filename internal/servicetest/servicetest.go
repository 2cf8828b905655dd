// Package servicetest runs the whole service in a test: a fresh database
// (dbtest), the workers, the event broker and the HTTP handler behind a
// real HTTP server, with the generated client pointed at it. Tests of the
// browser front end, the CLI and the API drive it like a user would.
//
// A package using it must call dbtest.Main from its TestMain.
package servicetest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/secret"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// Options tune Start.
type Options struct {
	// MaxWorkers bounds the jobs run at once; 4 when zero.
	MaxWorkers int
	// Log receives the service's log lines; discarded when nil.
	Log io.Writer
	// APIToken, when set, is required by the API (httpapi.Options.APIToken);
	// Client sends it.
	APIToken string
	// DatabaseTokens makes the API take the database's tokens too (users'
	// personal tokens), as `mailmigrate serve` does.
	DatabaseTokens bool
	// Workers tune the jobs, e.g. ProgressEvents for frequent
	// account.progress events or LeaseRenewal for a prompt cancel; the
	// workers' defaults when zero.
	Workers worker.Options
	// Delivery tunes the webhook and mail senders; its AllowedHosts is
	// 127.0.0.1, where the tests' receivers listen, when nil.
	Delivery delivery.Options
	// AttemptLimits bound the attempts (connections per host).
	AttemptLimits migration.AttemptLimits
	// Queries, when set, counts the SQL statements the service sends.
	Queries *QueryCounter
	// Clock is the service's now for schedules (time.Now when nil), and
	// SchedulePoll how often it looks for passes due (the app's default
	// when zero).
	Clock        func() time.Time
	SchedulePoll time.Duration
	// Beside, when set, starts another process of the same service: on
	// its database, with its key.
	Beside *Service
	// Mail, when set, is the SMTP server tasks mail through.
	Mail *delivery.MailServer
}

// Service is a running service.
type Service struct {
	URL    string // server root, e.g. http://127.0.0.1:1234
	API    string // URL + /api/v1
	Client *api.ClientWithResponses
	Pool   *pgxpool.Pool
	App    *app.App
	key    []byte
	stop   func()
}

// Start runs the service until t ends.
func Start(t testing.TB, opts Options) *Service {
	t.Helper()
	if opts.MaxWorkers == 0 {
		opts.MaxWorkers = 4
	}
	if opts.Workers.LoginFailureLimit == (migration.LoginFailureLimit{}) {
		// Every test's servers are on 127.0.0.1, with wrong passwords on
		// purpose: no limit unless a test sets one.
		opts.Workers.LoginFailureLimit = migration.LoginFailureLimit{Max: -1}
	}
	if opts.Delivery.AllowedHosts == nil {
		// The tests' receivers listen on loopback.
		opts.Delivery.AllowedHosts = []string{"127.0.0.1"}
	}
	logger := slog.New(slog.DiscardHandler)
	if opts.Log != nil {
		logger = slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var db *pgxpool.Pool
	key := secret.NewKey()
	if opts.Beside != nil {
		db, key = opts.Beside.Pool, opts.Beside.key
	} else {
		db = pool(t, opts.Queries)
	}
	box, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(db, box, logger, app.Config{
		MaxWorkers: opts.MaxWorkers, FetchPollInterval: 100 * time.Millisecond, APIToken: opts.APIToken, DatabaseTokens: opts.DatabaseTokens, Workers: opts.Workers, Delivery: opts.Delivery,
		AttemptLimits: opts.AttemptLimits, Clock: opts.Clock, SchedulePoll: opts.SchedulePoll, Mail: opts.Mail,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler)
	stop := sync.OnceFunc(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(ctx) //nolint:errcheck // jobs left resume in the next process, or are dropped with the database
	})
	t.Cleanup(stop)
	var clientOpts []api.ClientOption
	if opts.APIToken != "" {
		clientOpts = append(clientOpts, api.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+opts.APIToken)
			return nil
		}))
	}
	client, err := api.NewClientWithResponses(srv.URL+httpapi.BasePath, clientOpts...)
	if err != nil {
		t.Fatal(err)
	}
	return &Service{URL: srv.URL, API: srv.URL + httpapi.BasePath, Client: client, Pool: db, App: a, key: key, stop: stop}
}

// pool is a pool on a new database, whose statements counter counts.
func pool(t testing.TB, counter *QueryCounter) *pgxpool.Pool {
	t.Helper()
	if counter == nil {
		return dbtest.Pool(t)
	}
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = counter
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// QueryCounter counts SQL statements by whether they name a table: how
// often the service reads or writes it (a pgx.QueryTracer).
type QueryCounter struct {
	mu     sync.Mutex
	counts map[string]int
	tables []string
}

// NewQueryCounter counts the statements that name each of tables.
func NewQueryCounter(tables ...string) *QueryCounter {
	return &QueryCounter{counts: map[string]int{}, tables: tables}
}

// TraceQueryStart implements pgx.QueryTracer.
func (c *QueryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[""]++
	for _, table := range c.tables {
		if strings.Contains(data.SQL, table) {
			c.counts[table]++
		}
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (c *QueryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Count returns how many statements named table so far; "" counts all.
func (c *QueryCounter) Count(table string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[table]
}

// Stop stops the process as a shutdown would: its HTTP server, its loops,
// and its workers, which get 10 s to finish. The database stays for the
// processes Beside it.
func (s *Service) Stop() { s.stop() }
