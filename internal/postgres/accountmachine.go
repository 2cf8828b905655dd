package postgres

import (
	"context"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// decideAccount reads an account's facts under its row lock, held until
// the transaction of q ends, and returns the domain's answer to trigger
// (docs/design.md#the-account-state-machine), and the account's source
// login for the events of its move. A deleted account answers
// pgx.ErrNoRows.
func decideAccount(ctx context.Context, q *dbsqlc.Queries, taskID, accountID int64, trigger migration.AccountTrigger) (migration.AccountTransition, string, error) {
	row, err := q.AccountFactsLock(ctx, dbsqlc.AccountFactsLockParams{TaskID: taskID, ID: accountID,
		Canceling: string(migration.TaskCanceling)})
	if err != nil {
		return migration.AccountTransition{}, "", err
	}
	facts := migration.AccountFacts{
		State:         migration.AccountState(row.State),
		Generation:    row.RunGeneration,
		Admitted:      row.RunAdmitted,
		StopAsked:     row.RunCancel,
		Retries:       int(row.RunRetries),
		TaskCanceling: row.TaskCanceling,
		TaskHeld:      row.TaskHeld,
	}
	transition, err := migration.DecideAccount(facts, trigger)
	return transition, row.SourceLogin, err
}

// guard is a move's state guard and target, as its statement takes them:
// the states it moves from, and the state it moves to.
func guard(move migration.AccountMove) ([]string, string) {
	return texts(move.From()), string(move.To())
}
