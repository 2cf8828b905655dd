// Package postgres is the storage adapter: it turns the domain's store calls
// into the sqlc-generated queries of gen/dbsqlc, converts rows to domain
// types, and translates PostgreSQL errors into the domain's errors.
package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// Store keeps mailmigrate's data in PostgreSQL.
type Store struct {
	pool    *pgxpool.Pool
	queries *dbsqlc.Queries
	box     *secret.Box // seals passwords
	// jobs inserts River jobs in the store's transactions; it runs none.
	jobs    *river.Client[pgx.Tx]
	jobsErr error
	limits  migration.AttemptLimits // what admission holds every attempt to
	// tokens are the API tokens, whose cache a revocation clears.
	tokens  *APITokens
	options *optionsMemo // tasks' options, decoded
}

var _ migration.Store = (*Store)(nil)

// New returns a Store on pool that seals passwords with box and admits
// attempts within limits. The schema must be migrated (Migrate) and box's key
// checked (CheckSecretKey).
func New(pool *pgxpool.Pool, box *secret.Box, limits migration.AttemptLimits) *Store {
	jobs, err := newJobInserter(pool)
	return &Store{pool: pool, queries: dbsqlc.New(pool), box: box, jobs: jobs, jobsErr: err, limits: limits, tokens: NewAPITokens(pool),
		options: newOptionsMemo()}
}

// Tokens are the API tokens the database holds, as the API checks them: a
// token the store revokes, or whose user it deletes, stops letting
// requests in to this process at once (to others within validTokenReuse).
func (s *Store) Tokens() *APITokens { return s.tokens }

// PostgreSQL error codes the store interprets (Appendix A).
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// Connect opens a pool for url and checks that the server answers.
func Connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// interpretError turns errors of the driver into the domain's sentinels.
// Everything else passes through unchanged: its text is what a client sees
// in a 500, as the interface specifies.
func interpretError(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return migration.ErrNotFound
	}
	return err
}

// beginWithEventsLock begins a transaction and takes EventsLock in the
// same round trip. EventsLock is taken first by every transaction that
// appends events, before any row lock, and held to its commit: seq values
// then commit in their order, so a reader that has seen seq n never sees a
// smaller one appear later (the live stream relies on it).
const beginWithEventsLock = "BEGIN; SELECT pg_advisory_xact_lock(7306050001)"

// inEventsTx runs fn in a transaction that takes EventsLock first, before
// any row lock: every transaction that appends events, or moves an account
// into or out of running, is one of these.
func (s *Store) inEventsTx(ctx context.Context, fn func(tx pgx.Tx, q *dbsqlc.Queries) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{BeginQuery: beginWithEventsLock}, func(tx pgx.Tx) error {
		return fn(tx, s.queries.WithTx(tx))
	})
}
