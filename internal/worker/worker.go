// Package worker holds the River workers that do a task's background
// work: connection tests and migrations. Each job touches one account;
// the store counts a task's jobs down and ends the task after the last.
package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/mailmigrate/mailmigrate/internal/metrics"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/persist"
	"github.com/mailmigrate/mailmigrate/internal/sides"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// Store is what the workers need of storage.
type Store interface {
	TaskEndpoints(ctx context.Context, taskID int64) (src, dst migration.Endpoint, err error)
	TaskOptions(ctx context.Context, taskID int64) (migration.TaskOptions, error)
	AccountCredentials(ctx context.Context, taskID, id int64) (migration.Credentials, error)
	sides.RotatedTokenStore
	// LoginFailureRecord counts a login that host's server refused.
	LoginFailureRecord(ctx context.Context, host string) error
	// LoginAttemptClaim reserves a login on host within limit, counted
	// as a failure until LoginAttemptSucceeded takes it back; at the
	// limit it claims nothing (id 0) and says how long to wait.
	LoginAttemptClaim(ctx context.Context, host string, limit migration.LoginFailureLimit) (id int64, wait time.Duration, err error)
	LoginAttemptSucceeded(ctx context.Context, id int64) error
	EventAppend(ctx context.Context, e migration.Event) error
}

// Lifecycle is the application service (migration.Service) as the jobs
// see it: every state their work moves, an account's, a test's or a
// plan's, goes through it, as a request's does.
type Lifecycle interface {
	StartAttempt(ctx context.Context, job migration.AttemptJob) (migration.StartedAttempt, bool, error)
	RenewAttempt(ctx context.Context, job migration.AttemptJob) (stop bool, err error)
	EndAttempt(ctx context.Context, outcome migration.AttemptOutcome) error
	EndAccountTest(ctx context.Context, outcome migration.AccountTestOutcome) error
	EndAccountPlan(ctx context.Context, outcome migration.PlanOutcome) error
	AdmitWaiting(ctx context.Context) error
}

// Options tune the workers of a process.
type Options struct {
	// LeaseRenewal is how often a running account's lease is renewed (and
	// its task checked for a cancel); 10 s when zero. Leases expire after
	// a few missed renewals (app.Config.LeaseExpiry).
	LeaseRenewal time.Duration
	// ProgressEvents spaces the account.progress events of an account;
	// 5 s when zero.
	ProgressEvents time.Duration
	// RetryDelays space the retries of an attempt that failed on a transient
	// fault; migration.DefaultRetryDelays when nil.
	RetryDelays []time.Duration
	// Tuning tunes the copy engine (timeouts, its own reconnects).
	Tuning transfer.Tuning
	// Metrics counts what the jobs copy and the IMAP errors; may be nil.
	Metrics *metrics.Metrics
	// LoginFailureLimit bounds the failed logins login tests cause per
	// server host; migration.DefaultLoginFailureLimit when zero, none
	// with a negative Max.
	LoginFailureLimit migration.LoginFailureLimit
}

func (o Options) withDefaults() Options {
	if o.LeaseRenewal <= 0 {
		o.LeaseRenewal = 10 * time.Second
	}
	if o.ProgressEvents <= 0 {
		o.ProgressEvents = 5 * time.Second
	}
	if o.RetryDelays == nil {
		o.RetryDelays = migration.DefaultRetryDelays
	}
	if o.LoginFailureLimit == (migration.LoginFailureLimit{}) {
		o.LoginFailureLimit = migration.DefaultLoginFailureLimit
	}
	return o
}

// Register adds every worker to workers: they read what a job needs from
// store and report what it did to lifecycle.
func Register(workers *river.Workers, store AttemptStore, lifecycle Lifecycle, logger *slog.Logger, opts Options) {
	logins := sides.NewLogins(store, logger)
	river.AddWorker(workers, &AccountTest{store: store, lifecycle: lifecycle, logger: logger, metrics: opts.Metrics, logins: logins,
		limit: opts.withDefaults().LoginFailureLimit})
	river.AddWorker(workers, &AccountAttempt{store: store, lifecycle: lifecycle, logger: logger, opts: opts.withDefaults(), logins: logins})
	river.AddWorker(workers, &Admit{lifecycle: lifecycle})
	river.AddWorker(workers, &AccountPlan{store: store, lifecycle: lifecycle, logger: logger, opts: opts.withDefaults(), logins: logins})
}

// Admit admits the waiting accounts that have room when a retry's delay
// ends.
type Admit struct {
	river.WorkerDefaults[migration.AdmitJob]
	lifecycle Lifecycle
}

// Work admits.
func (w *Admit) Work(ctx context.Context, _ *river.Job[migration.AdmitJob]) error {
	return w.lifecycle.AdmitWaiting(ctx)
}

// loginTuning bounds a connection test: no retries (lock-outs), and a
// server that does not answer within seconds is reported as such.
var loginTuning = transfer.Tuning{GreetingTimeout: 20 * time.Second, IdleTimeout: 30 * time.Second, Tries: 1}

// AccountTest logs in to both sides of an account and records the result
// on the account and in the event log.
type AccountTest struct {
	river.WorkerDefaults[migration.AccountTestJob]
	store     Store
	lifecycle Lifecycle
	logger    *slog.Logger
	metrics   *metrics.Metrics
	logins    *sides.Logins
	limit     migration.LoginFailureLimit
}

// Work runs one connection test. Whatever goes wrong ends up in the
// outcome, so that the task's test always ends; a test canceled
// meanwhile (its context ends) leaves the account's last result alone.
func (w *AccountTest) Work(ctx context.Context, job *river.Job[migration.AccountTestJob]) error {
	args := job.Args
	outcome := migration.AccountTestOutcome{TaskID: args.TaskID, AccountID: args.AccountID, Generation: args.Generation}
	src, dst, shared, err := accountSides(ctx, w.store, w.logins, args.TaskID, args.AccountID)
	if err != nil {
		w.logger.Error("connection test could not start", "task", args.TaskID, "account", args.AccountID, "err", err)
		outcome.SourceError, outcome.DestinationError = err.Error(), err.Error()
		return persist.Outcome(ctx, w.logger, func(ctx context.Context) error { return w.lifecycle.EndAccountTest(ctx, outcome) })
	}
	// A server that refused as many logins as the limit allows is not
	// tried again before its window moves on: the test waits (snoozed,
	// the task's other work goes on).
	claims, wait, err := w.claimLogins(ctx, args, src.Host, dst.Host)
	if err != nil || wait > 0 {
		if err != nil {
			return err
		}
		return river.JobSnooze(wait)
	}
	// The source's login also counts the folders the task copies: its
	// totals are known before the first attempt.
	options, err := w.store.TaskOptions(ctx, args.TaskID)
	if err != nil {
		w.logger.Warn("the task's options could not be read; the source is counted whole", "task", args.TaskID, "err", err)
	}
	began := time.Now()
	count, counted, srcErr := transfer.CheckLoginAndCount(ctx, src, loginTuning, optionsOf(options))
	srcTook, began := time.Since(began), time.Now()
	dstErr := transfer.CheckLogin(ctx, dst, "destination", loginTuning)
	dstTook := time.Since(began)
	w.settleClaim(ctx, claims[0], srcErr)
	w.settleClaim(ctx, claims[1], dstErr)
	outcome.SourceCounted, outcome.SourceMessages, outcome.SourceBytes = counted, int64(count.Messages), count.Bytes
	if ctx.Err() != nil { // a cancel is no server's failure
		outcome.Canceled = true
		return persist.Outcome(ctx, w.logger, func(ctx context.Context) error { return w.lifecycle.EndAccountTest(ctx, outcome) })
	}
	outcome.SourceTook, outcome.DestinationTook = srcTook, dstTook
	outcome.SourceError = w.loginError(srcErr, src, "source", shared[0], srcTook)
	outcome.DestinationError = w.loginError(dstErr, dst, "destination", shared[1], dstTook)
	switch {
	case loginRefused(srcErr):
		outcome.LoginRefused = "source"
	case loginRefused(dstErr):
		outcome.LoginRefused = "destination"
	}
	outcome.Events = []migration.Event{
		migration.TestEvent(args.TaskID, args.AccountID, "source", src.Login, src.Host, src.Port, outcome.SourceError),
		migration.TestEvent(args.TaskID, args.AccountID, "destination", dst.Login, dst.Host, dst.Port, outcome.DestinationError),
	}
	scrubTestOutcome(&outcome, knownSecrets(src, dst))
	return persist.Outcome(ctx, w.logger, func(ctx context.Context) error { return w.lifecycle.EndAccountTest(ctx, outcome) })
}

// claimLogins claims a login on each host within the failed-login limit,
// or takes back what it claimed and says how long to wait, once in the
// task's log.
func (w *AccountTest) claimLogins(ctx context.Context, args migration.AccountTestJob, hosts ...string) ([]int64, time.Duration, error) {
	claims := make([]int64, len(hosts))
	for i, host := range hosts {
		id, wait, err := w.store.LoginAttemptClaim(ctx, host, w.limit)
		if err == nil && wait == 0 {
			claims[i] = id
			continue
		}
		for _, claimed := range claims[:i] {
			w.settleClaim(ctx, claimed, nil)
		}
		if err != nil {
			return nil, 0, err
		}
		until := time.Now().Add(wait)
		w.logger.Info("login test waits for a server's failed-login window", "host", host, "until", until)
		return nil, wait, w.store.EventAppend(ctx, migration.Event{Kind: migration.EventAccountThrottled, TaskID: args.TaskID,
			AccountID: args.AccountID, Host: host, Message: w.limit.WaitWords(host, until)})
	}
	return claims, 0, nil
}

// settleClaim keeps a claimed login as a failure when the server refused
// it (err), and takes it back otherwise (it worked, or failed for another
// reason, which no lock-out counts). A claim that cannot be taken back
// is logged: it only slows the next tests for a window.
func (w *AccountTest) settleClaim(ctx context.Context, id int64, err error) {
	if id == 0 || loginRefused(err) {
		return
	}
	if err := w.store.LoginAttemptSucceeded(context.WithoutCancel(ctx), id); err != nil {
		w.logger.Warn("could not take back a login claim", "err", err)
	}
}

// loginRefused reports whether err is a server's (or an authorization
// server's) refusal of the login, which trying again only feeds a
// lock-out with.
func loginRefused(err error) bool {
	return err != nil && (imapconn.KindOf(err) == imapconn.KindAuth || imapconn.TokenRefused(err))
}

// loginError is the text of a login test's failure on side, counted.
// A refusal that took long says the server penalises failures.
// The words end with what to do (migration.TestFailureWords).
func (w *AccountTest) loginError(err error, party imapconn.Side, side, shared string, took time.Duration) string {
	if err == nil {
		return ""
	}
	w.metrics.IMAPError(side, imapconn.KindOf(err).Name())
	text := loginError(err)
	if loginRefused(err) {
		text += migration.SlowRefusalWords(took)
	}
	kind := migration.FailureKind(imapconn.KindOf(err).Name())
	if imapconn.TokenRefused(err) {
		kind = migration.FailureToken
	}
	blamed := migration.Party{Side: side, Login: party.Login, Host: party.Host, Port: party.Port, Shared: shared}
	return migration.TestFailureWords(text, kind, migration.ServerProblem(transfer.ConfigProblem(err)), blamed)
}

// accountSides reads the account's credentials and its task's endpoints:
// how a job logs in to both sides, and what each side logs in with that
// is its endpoint's, not the account's (EndpointAuth.SharedCredential),
// for the advice about a refusal.
func accountSides(ctx context.Context, store Store, logins *sides.Logins, taskID, accountID int64) (src, dst imapconn.Side, shared [2]string, err error) {
	srcEndpoint, dstEndpoint, err := store.TaskEndpoints(ctx, taskID)
	if err != nil {
		return src, dst, shared, err
	}
	creds, err := store.AccountCredentials(ctx, taskID, accountID)
	if err != nil {
		return src, dst, shared, err
	}
	src, dst = logins.Sides(taskID, accountID, srcEndpoint, dstEndpoint, creds)
	return src, dst, [2]string{srcEndpoint.Auth.SharedCredential(), dstEndpoint.Auth.SharedCredential()}, nil
}

// loginError is the text an event and the account show for a failed
// login: what went wrong and the server's words. The side, host and port
// have fields of their own.
func loginError(err error) string {
	if err == nil {
		return ""
	}
	var te *imapconn.Error
	if errors.As(err, &te) {
		return te.Kind.String() + ": " + te.Err.Error()
	}
	return err.Error()
}
