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
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
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
	// Workers tune the jobs, e.g. ProgressEvents for frequent
	// account.progress events or LeaseRenewal for a prompt cancel; the
	// workers' defaults when zero.
	Workers worker.Options
}

// Service is a running service.
type Service struct {
	URL    string // server root, e.g. http://127.0.0.1:1234
	API    string // URL + /api/v1
	Client *api.ClientWithResponses
	Pool   *pgxpool.Pool
	App    *app.App
}

// Start runs the service until t ends.
func Start(t testing.TB, opts Options) *Service {
	t.Helper()
	if opts.MaxWorkers == 0 {
		opts.MaxWorkers = 4
	}
	logger := slog.New(slog.DiscardHandler)
	if opts.Log != nil {
		logger = slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	pool := dbtest.Pool(t)
	box, err := secret.NewBox(secret.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(pool, box, logger, app.Config{
		MaxWorkers: opts.MaxWorkers, FetchPollInterval: 100 * time.Millisecond, APIToken: opts.APIToken, Workers: opts.Workers,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(ctx) //nolint:errcheck // the test is over; jobs left are dropped with the database
	})
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
	return &Service{URL: srv.URL, API: srv.URL + httpapi.BasePath, Client: client, Pool: pool, App: a}
}
