package postgres

import "context"

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
