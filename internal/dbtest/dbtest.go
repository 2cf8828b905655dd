// Package dbtest gives tests a real PostgreSQL: the server named by
// TEST_DATABASE_URL, or else a private cluster started once per test binary
// from the installed server binaries. Each test gets its own database,
// cloned from a migrated template, and dropped when the test ends. A missing
// server fails the test: nothing is skipped.
package dbtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/internal/localpg"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
)

type harness struct {
	adminURL string // maintenance database, for CREATE/DROP DATABASE
	template string
	local    *localpg.Server
	tempDir  string
	err      error
}

var (
	setupOnce sync.Once
	shared    harness
	counter   atomic.Int64
)

// Main runs the package's tests and stops the private cluster afterwards.
// Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.local != nil {
		shared.local.Stop(context.Background()) //nolint:errcheck // exiting anyway
		os.RemoveAll(shared.tempDir)
	}
	os.Exit(code)
}

// URL returns the connection string of a new, migrated, empty database that
// is dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	setupOnce.Do(shared.setup)
	if shared.err != nil {
		t.Fatalf("dbtest: no PostgreSQL for tests: %v", shared.err)
	}
	ctx := context.Background()
	name := fmt.Sprintf("mm_test_%d_%d", os.Getpid(), counter.Add(1))
	admin, err := pgx.Connect(ctx, shared.adminURL)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	defer admin.Close(ctx)
	create := fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", ident(name), ident(shared.template))
	if _, err := admin.Exec(ctx, create); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() { dropDatabase(name) })
	return databaseURL(shared.adminURL, name)
}

// Pool returns a pool on a new database (see URL), closed when t ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), URL(t))
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func (h *harness) setup() {
	ctx := context.Background()
	h.adminURL = os.Getenv("TEST_DATABASE_URL")
	if h.adminURL == "" {
		if h.err = h.startLocal(ctx); h.err != nil {
			return
		}
	}
	h.template = fmt.Sprintf("mm_template_%d", os.Getpid())
	h.err = h.createTemplate(ctx)
}

func (h *harness) startLocal(ctx context.Context) error {
	// A world-traversable directory: as root, the cluster runs as the
	// postgres account, which must be able to reach it.
	dir, err := os.MkdirTemp("", "mailmigrate-dbtest-")
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	h.tempDir = dir
	h.local, err = localpg.Start(ctx, localpg.Options{Dir: dir, Fast: true})
	if err != nil {
		return err
	}
	h.adminURL = h.local.AdminURL()
	return nil
}

func (h *harness) createTemplate(ctx context.Context) error {
	admin, err := pgx.Connect(ctx, h.adminURL)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(h.template)); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident(h.template)); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, databaseURL(h.adminURL, h.template))
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = postgres.Migrate(ctx, pool)
	return err
}

func dropDatabase(name string) {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, shared.adminURL)
	if err != nil {
		return
	}
	defer admin.Close(ctx)
	admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)") //nolint:errcheck // cleanup
}

// databaseURL returns the connection string url with its database
// replaced by name, in either of PostgreSQL's two connection-string forms.
func databaseURL(connString, name string) string {
	if u, err := url.Parse(connString); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	// Keyword/value form: a later keyword overrides an earlier one.
	return connString + " dbname=" + name
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }
