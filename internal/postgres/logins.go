package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// LoginFailureRecord counts a login that host's server refused.
func (s *Store) LoginFailureRecord(ctx context.Context, host string) error {
	return interpretError(s.queries.LoginFailureRecord(ctx, host))
}

// LoginAttemptClaim reserves a login on host within limit: the claim
// counts as a failure until LoginAttemptSucceeded takes it back, so that
// logins at once cannot together go past the limit. At the limit it
// claims nothing (id 0) and says how long to wait.
func (s *Store) LoginAttemptClaim(ctx context.Context, host string, limit migration.LoginFailureLimit) (id int64, wait time.Duration, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if err := q.LoginHostLock(ctx, host); err != nil {
			return err
		}
		recent, err := q.LoginFailuresRecent(ctx, dbsqlc.LoginFailuresRecentParams{Host: host, WindowSeconds: limit.Window.Seconds()})
		if err != nil {
			return err
		}
		if wait = limit.Wait(int(recent.Failures), recent.Oldest.Time, time.Now()); wait > 0 {
			return nil
		}
		id, err = q.LoginAttemptClaim(ctx, host)
		return err
	})
	return id, wait, interpretError(err)
}

// LoginAttemptSucceeded takes back the claim id of a login that worked.
func (s *Store) LoginAttemptSucceeded(ctx context.Context, id int64) error {
	return interpretError(s.queries.LoginAttemptSucceeded(ctx, id))
}
