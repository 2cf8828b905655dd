// Package app wires one mailmigrate process together: the store on a
// migrated database, the background workers (River), the event broker and
// the HTTP handler. The serve command and the end-to-end tests build the
// service the same way through it.
package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/event"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/metrics"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/oauth/signin"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/secret"
	"github.com/mailmigrate/mailmigrate/internal/sides"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// Config tunes a process.
type Config struct {
	// MaxWorkers bounds the accounts this process migrates at once.
	MaxWorkers int
	// TestWorkers bounds the connection tests this process runs at once
	// (8 when zero); tests have a queue of their own.
	TestWorkers int
	// AttemptLimits bound the attempts of the whole service: admission holds
	// every process to them.
	AttemptLimits migration.AttemptLimits
	// FetchPollInterval is how often idle workers look for jobs when no
	// notification arrives; River's default when zero.
	FetchPollInterval time.Duration
	// Workers tune the jobs: limits, lease renewal, progress events.
	Workers worker.Options
	// Delivery tunes the webhook and mail senders, and names the webhook
	// receivers allowed at internal addresses.
	Delivery delivery.Options
	// LeaseExpiry is how long a running account's lease lasts without
	// renewal before its process is taken for dead and the account is
	// queued again; 60 s when zero.
	LeaseExpiry time.Duration
	// WorkerID names this process in the job queue; River's default
	// (host name and time) when empty.
	WorkerID string
	// APIToken, when set, is a bearer token the API and the event stream
	// take (httpapi.Options.APIToken).
	APIToken string
	// DatabaseTokens makes the API take the tokens the database holds
	// (postgres.APITokens) and ask for a token even without APIToken.
	// Without either, the API asks for none (--insecure-no-auth, tests).
	DatabaseTokens bool
	// AllowedHosts are the host names, beyond IP addresses and localhost,
	// that requests may name in Host (httpapi.Options.AllowedHosts).
	AllowedHosts []string
	// Limits bound request bodies, timeouts and event streams; zero
	// fields take httpapi's defaults.
	Limits httpapi.Limits
	// Clock is the process's now for schedules; time.Now when nil. Tests
	// move it on.
	Clock func() time.Time
	// SchedulePoll is how often the process looks for scheduled passes
	// due; 2 s when zero.
	SchedulePoll time.Duration
	// Mail is the SMTP server tasks mail their summaries through; nil:
	// none, and tasks cannot have recipients.
	Mail *delivery.MailServer
	// AuditRetention is how long the audit trail keeps a request;
	// DefaultAuditRetention when zero.
	AuditRetention time.Duration
}

// DefaultAuditRetention is how long the audit trail keeps a request by
// default: a quarter and more, for a migration's review after cut-over.
const DefaultAuditRetention = 180 * 24 * time.Hour

// auditPrunePeriod is how often the trail drops what it no longer keeps.
const auditPrunePeriod = time.Hour

// App is one running process of the service.
type App struct {
	Store   *postgres.Store
	Handler http.Handler
	Service *migration.Service

	pool       *pgxpool.Pool
	metrics    *metrics.Metrics
	webhooks   *delivery.WebhookSender
	jobs       *river.Client[pgx.Tx] // nil until StartWorkers
	stopBroker context.CancelFunc
	// stopLoops ends the scheduler of the process's chores (the attempts of
	// dead processes, the webhooks, the schedules) that loops waits for.
	stopLoops context.CancelFunc
	loops     sync.WaitGroup
	logger    *slog.Logger
}

// Start builds the process on pool (already migrated) and starts its
// event broker, its workers and its watch for dead processes' attempts.
func Start(pool *pgxpool.Pool, box *secret.Box, logger *slog.Logger, cfg Config) (*App, error) {
	if cfg.LeaseExpiry <= 0 {
		cfg.LeaseExpiry = time.Minute
	}
	a := New(pool, box, logger, cfg)
	if err := a.StartWorkers(cfg); err != nil {
		a.Stop(context.Background()) //nolint:errcheck // no job has started
		return nil, err
	}
	if cfg.SchedulePoll <= 0 {
		cfg.SchedulePoll = 2 * time.Second
	}
	retention := cfg.AuditRetention
	if retention <= 0 {
		retention = DefaultAuditRetention
	}
	chores := []chore{
		{name: "take over the attempts of stopped processes", period: cfg.LeaseExpiry / 4,
			do: func(ctx context.Context) error { return a.takeOverLostAttempts(ctx, cfg.LeaseExpiry) }},
		{name: "send the webhooks due", period: a.webhooks.Poll, do: a.webhooks.SendDue},
		{name: "start the scheduled passes due", period: cfg.SchedulePoll, do: a.startScheduledPasses},
		{name: "prune the audit trail and the ended console sessions", period: auditPrunePeriod, atOnce: true,
			do: func(ctx context.Context) error { return a.pruneRecords(ctx, retention) }},
	}
	if cfg.Mail != nil {
		mailer := delivery.NewMailSender(a.Store, a.Service, *cfg.Mail, a.logger, cfg.Delivery)
		chores = append(chores, chore{name: "send the mails due", period: mailer.Poll, do: mailer.SendDue})
	}
	loopsCtx, stopLoops := context.WithCancel(context.Background())
	a.stopLoops = stopLoops
	s := &scheduler{chores: chores, logger: a.logger}
	a.loops.Go(func() { s.run(loopsCtx) })
	return a, nil
}

// New builds the process on pool (already migrated) and starts its event
// broker: the API works, and jobs queued wait for workers (StartWorkers),
// here or in another process. Tests that drive the jobs themselves use it.
func New(pool *pgxpool.Pool, box *secret.Box, logger *slog.Logger, cfg Config) *App {
	store := postgres.New(pool, box, cfg.AttemptLimits)
	counters := metrics.New(store, logger)
	broker := event.NewBroker(pool.Config().ConnConfig.Copy(), logger)
	brokerCtx, stopBroker := context.WithCancel(context.Background())
	go broker.Run(brokerCtx)
	service := migration.NewService(store)
	service.Clock = cfg.Clock
	service.MailServer = cfg.Mail != nil
	webhooks := delivery.NewWebhookSender(store, logger, cfg.Delivery)
	service.Webhooks = webhooks
	handler := httpapi.NewHandler(httpapi.Options{
		Events:   broker,
		Service:  service,
		Logger:   logger,
		Ready:    func(ctx context.Context) error { return postgres.Ready(ctx, pool) },
		Metrics:  counters,
		APIToken: cfg.APIToken,
		Limits:   cfg.Limits,

		Credentials:  databaseCredentials(cfg.DatabaseTokens, store),
		AllowedHosts: cfg.AllowedHosts,

		CheckEndpoint: sides.CheckEndpoint,
		Authorizer:    signin.NewAuthorizer(store, logger),
		Audit:         store,
	})
	return &App{Store: store, Handler: handler, Service: service, pool: pool, metrics: counters, webhooks: webhooks, stopBroker: stopBroker, logger: logger}
}

// databaseCredentials are the database's tokens when the API takes them.
func databaseCredentials(take bool, store *postgres.Store) httpapi.Credentials {
	if !take {
		return nil // a nil *APITokens in the interface would not be nil
	}
	return store.Tokens()
}

// StartWorkers runs the background jobs in this process with cfg's
// MaxWorkers (16 when zero), TestWorkers, FetchPollInterval, WorkerID and
// Workers.
func (a *App) StartWorkers(cfg Config) error {
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = 16
	}
	if cfg.TestWorkers <= 0 {
		cfg.TestWorkers = 8
	}
	cfg.Workers.Metrics = a.metrics
	workers := river.NewWorkers()
	worker.Register(workers, a.Store, a.Service, a.logger, cfg.Workers)
	jobs, err := river.NewClient(riverpgxv5.New(a.pool), &river.Config{
		Queues: map[string]river.QueueConfig{
			migration.QueueAttempts: {MaxWorkers: cfg.MaxWorkers},
			migration.QueueTests:    {MaxWorkers: cfg.TestWorkers},
			migration.QueueControl:  {MaxWorkers: 2},
			// Jobs queued by versions before the queues were split.
			river.QueueDefault: {MaxWorkers: 2},
		},
		Workers: workers,
		Logger:  a.logger,
		// An admitted account's job starts within milliseconds of the
		// notification of its insert.
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: cfg.FetchPollInterval,
		ID:                cfg.WorkerID,
		// Accounts of a dead process are taken over by their leases
		// (RequeueLostAttempts); River's own rescue would discard a long
		// migration that is still running after an hour.
		RescueStuckJobsAfter: 7 * 24 * time.Hour,
	})
	if err != nil {
		return err
	}
	// The workers live until Stop, not until a request context ends:
	// in-flight jobs get the shutdown timeout to finish.
	if err := jobs.Start(context.Background()); err != nil {
		return err
	}
	a.jobs = jobs
	return nil
}

// takeOverLostAttempts queues again the accounts whose process died
// during their attempt.
func (a *App) takeOverLostAttempts(ctx context.Context, expiry time.Duration) error {
	n, err := a.Service.TakeOverLostAttempts(ctx, expiry)
	if n > 0 {
		a.logger.Warn("queued again the accounts of a stopped process", "accounts", n)
	}
	return err
}

// startScheduledPasses starts the passes the tasks' schedules have due.
func (a *App) startScheduledPasses(ctx context.Context) error {
	n, err := a.Service.StartDuePasses(ctx)
	if n > 0 {
		a.logger.Info("started scheduled passes", "tasks", n)
	}
	return err
}

// pruneRecords drops the audit trail's entries older than retention, and
// the console sessions that ended.
func (a *App) pruneRecords(ctx context.Context, retention time.Duration) error {
	n, err := a.Service.PruneRecords(ctx, retention)
	if n > 0 {
		a.logger.Info("pruned the audit trail", "entries", n, "older_than", retention)
	}
	return err
}

// Stop lets running jobs finish until ctx ends; those still running then
// resume on the next start.
func (a *App) Stop(ctx context.Context) error {
	defer a.stopBroker()
	if a.stopLoops != nil {
		a.stopLoops()
		a.loops.Wait()
	}
	if a.jobs == nil {
		return nil
	}
	return a.jobs.Stop(ctx)
}
