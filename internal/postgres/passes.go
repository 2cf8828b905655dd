package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// endPass closes the task's open pass in state, keeping its accounts'
// figures of now. A run that began before passes existed has none to close.
func endPass(ctx context.Context, q *dbsqlc.Queries, taskID int64, state migration.TaskState) error {
	pass, err := q.PassOpen(ctx, taskID)
	if err == pgx.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	f, err := q.PassFigures(ctx, dbsqlc.PassFiguresParams{TaskID: taskID, Pass: pass})
	if err != nil {
		return err
	}
	return q.PassEnd(ctx, dbsqlc.PassEndParams{TaskID: taskID, Pass: pass, State: string(state),
		AccountsCompleted: f.AccountsCompleted, AccountsWithErrors: f.AccountsWithErrors, AccountsFailed: f.AccountsFailed,
		AccountsCanceled: f.AccountsCanceled, MessagesCopied: f.MessagesCopied, MessagesSkipped: f.MessagesSkipped,
		MessagesFailed: f.MessagesFailed, BytesCopied: f.BytesCopied})
}

// TaskPasses returns a task's passes, first first: the open one with its
// accounts' figures of now.
func (s *Store) TaskPasses(ctx context.Context, taskID int64) ([]migration.Pass, error) {
	rows, err := s.queries.PassList(ctx, taskID)
	if err != nil {
		return nil, interpretError(err)
	}
	if len(rows) == 0 {
		if _, err := s.TaskState(ctx, taskID); err != nil {
			return nil, err // a missing task is a 404, not []
		}
	}
	passes := make([]migration.Pass, len(rows))
	for i, r := range rows {
		p := migration.Pass{Number: int(r.Pass), Accounts: int(r.Accounts), StartedAt: r.StartedAt.Time,
			EndedAt: timePtr(r.EndedAt), State: migration.TaskState(r.State.String),
			Figures: passFigures(dbsqlc.PassFiguresRow{AccountsCompleted: r.AccountsCompleted, AccountsWithErrors: r.AccountsWithErrors,
				AccountsFailed: r.AccountsFailed, AccountsCanceled: r.AccountsCanceled, MessagesCopied: r.MessagesCopied,
				MessagesSkipped: r.MessagesSkipped, MessagesFailed: r.MessagesFailed, BytesCopied: r.BytesCopied})}
		if p.EndedAt == nil {
			live, err := s.queries.PassFigures(ctx, dbsqlc.PassFiguresParams{TaskID: taskID, Pass: r.Pass})
			if err != nil {
				return nil, interpretError(err)
			}
			p.Figures = passFigures(live)
		}
		passes[i] = p
	}
	return passes, nil
}

func passFigures(f dbsqlc.PassFiguresRow) migration.PassFigures {
	return migration.PassFigures{Completed: int(f.AccountsCompleted), CompletedWithErrors: int(f.AccountsWithErrors),
		Failed: int(f.AccountsFailed), Canceled: int(f.AccountsCanceled),
		Totals: migration.Totals{MessagesCopied: f.MessagesCopied, BytesCopied: f.BytesCopied,
			MessagesSkipped: f.MessagesSkipped, MessagesFailed: f.MessagesFailed}}
}
