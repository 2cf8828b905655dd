package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/internal/metrics"
)

// AccountCountsByState counts the accounts of every task by state.
func (s *Store) AccountCountsByState(ctx context.Context) (map[string]int64, error) {
	rows, err := s.queries.AccountCountsByState(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	counts := make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.State] = r.Accounts
	}
	return counts, nil
}

// jobCountsSQL reads River's table, which sqlc does not see (River
// migrates it), so it is plain SQL; it uses River's index on state.
const jobCountsSQL = `SELECT kind, state::text, count(*) FROM river_job
WHERE state IN ('available', 'scheduled', 'retryable', 'running') GROUP BY kind, state ORDER BY kind, state`

// JobCountsByState counts the jobs not finished by kind and state.
func (s *Store) JobCountsByState(ctx context.Context) ([]metrics.JobCount, error) {
	rows, err := s.pool.Query(ctx, jobCountsSQL)
	if err != nil {
		return nil, interpretError(err)
	}
	counts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (metrics.JobCount, error) {
		var c metrics.JobCount
		return c, row.Scan(&c.Kind, &c.State, &c.Jobs)
	})
	return counts, interpretError(err)
}
