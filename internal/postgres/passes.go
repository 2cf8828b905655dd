package postgres

import (
	"context"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TaskPasses returns a task's passes, first first: the one under way with
// its accounts' figures of now.
func (s *Store) TaskPasses(ctx context.Context, taskID int64) ([]migration.Pass, error) {
	rows, err := s.queries.PassList(ctx, taskID)
	if err != nil {
		return nil, interpretError(err)
	}
	if err := s.emptyOfATask(ctx, taskID, len(rows)); err != nil {
		return nil, err
	}
	passes := make([]migration.Pass, len(rows))
	for i, r := range rows {
		passes[i] = migration.Pass{Number: int(r.Pass), StartedBy: migration.PassStarter(r.StartedBy), Accounts: int(r.Accounts), StartedAt: r.StartedAt.Time,
			EndedAt: timePtr(r.EndedAt), State: migration.TaskState(r.State.String),
			Figures: migration.PassFigures{Completed: int(r.AccountsCompleted), CompletedWithErrors: int(r.AccountsWithErrors),
				Failed: int(r.AccountsFailed), Canceled: int(r.AccountsCanceled),
				Totals: migration.Totals{MessagesCopied: r.MessagesCopied, BytesCopied: r.BytesCopied,
					MessagesSkipped: r.MessagesSkipped, MessagesFailed: r.MessagesFailed,
					SourceMessages: r.SourceMessages, SourceBytes: r.SourceBytes, AccountsUncounted: int64(r.AccountsUncounted)}}}
	}
	return passes, nil
}
