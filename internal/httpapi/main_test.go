package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/secret"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testService is the real router on a fresh database, behind a real
// HTTP server, with the generated client pointed at it.
type testService struct {
	url     string // server root
	api     string // server root + /api/v1
	client  *api.ClientWithResponses
	pool    *pgxpool.Pool
	store   *postgres.Store
	logs    *testsupport.SyncBuffer // everything the handler logged
	token   string                  // the API token, sent by do and client; "" when none is required
	process *app.App
}

func newTestService(t *testing.T) *testService {
	t.Helper()
	return newTestServiceWith(t, httpapi.Options{})
}

// newTestServiceWith is newTestService with opts' APIToken and Limits.
func newTestServiceWith(t *testing.T, opts httpapi.Options) *testService {
	t.Helper()
	return newTestServiceConfig(t, app.Config{APIToken: opts.APIToken, Limits: opts.Limits})
}

// newTestServiceConfig is newTestService with cfg's APIToken, Limits and
// AttemptLimits.
func newTestServiceConfig(t *testing.T, cfg app.Config) *testService {
	t.Helper()
	pool := dbtest.Pool(t)
	box, err := secret.NewBox(secret.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	logs := &testsupport.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The process as serve builds it, without workers: tests start them
	// when they want them (startWorkers).
	process := app.New(pool, box, logger, cfg)
	srv := httptest.NewServer(process.Handler)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		process.Stop(ctx) //nolint:errcheck // the test is over
	})
	client, err := api.NewClientWithResponses(srv.URL+httpapi.BasePath, api.WithRequestEditorFn(bearer(cfg.APIToken)))
	if err != nil {
		t.Fatal(err)
	}
	return &testService{url: srv.URL, api: srv.URL + httpapi.BasePath, client: client, pool: pool, store: process.Store,
		logs: logs, token: cfg.APIToken, process: process}
}

// bearer sets the Authorization header of a request to token, if any.
func bearer(token string) api.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return nil
	}
}

// reply is what a raw request got back.
type reply struct {
	status      int
	contentType string
	body        string
	header      http.Header
}

// do sends a raw request, for what the generated client cannot express
// (malformed JSON, non-integer ids).
func (s *testService) do(t *testing.T, method, path, body string) reply {
	t.Helper()
	return s.doAs(t, s.token, method, path, body)
}

// doAs is do with token (none when empty) instead of the service's.
func (s *testService) doAs(t *testing.T, token, method, path, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, s.api+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	bearer(token)(req.Context(), req) //nolint:errcheck // never fails
	return send(t, req)
}

// send sends req and reads the whole reply.
func send(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: string(b), header: resp.Header}
}

// wantText asserts a plain-text error response, body to the letter.
func wantText(t *testing.T, got reply, status int, body string) {
	t.Helper()
	if got.status != status || got.body != body {
		t.Errorf("got %d %q, want %d %q", got.status, got.body, status, body)
	}
	if got.contentType != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q, want text/plain; charset=utf-8", got.contentType)
	}
}
