package postgres

import (
	"context"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// decide reads a task's facts under its row lock, held until the
// transaction of q ends, and returns the domain's answer to command
// (docs/design.md#the-task-state-machine): the transition to apply, or
// the refusal. A missing task answers pgx.ErrNoRows.
func decide(ctx context.Context, q *dbsqlc.Queries, taskID int64, command migration.TaskCommand) (migration.TaskFacts, migration.TaskTransition, error) {
	facts, err := taskFactsLock(ctx, q, taskID, migration.ReadsPassFacts(command))
	if err != nil {
		return facts, migration.TaskTransition{}, err
	}
	transition, err := migration.DecideTask(facts, command)
	return facts, transition, err
}

// taskFactsLock reads what the domain decides a task's commands on, and
// holds the task's row until the transaction of q ends; the facts of its
// passes (Completed, FinalUnderWay) only with passFacts, zero else.
func taskFactsLock(ctx context.Context, q *dbsqlc.Queries, taskID int64, passFacts bool) (migration.TaskFacts, error) {
	row, err := q.TaskFactsLock(ctx, dbsqlc.TaskFactsLockParams{ID: taskID, PassFacts: passFacts,
		CompletedStates: texts(migration.CompletedPassStates)})
	if err != nil {
		return migration.TaskFacts{}, err
	}
	return migration.TaskFacts{
		State:         migration.TaskState(row.State),
		Paused:        row.Paused,
		TestRunning:   row.TestRunning,
		Accounts:      row.Accounts,
		Completed:     row.Completed,
		FinalUnderWay: row.FinalUnderWay,
	}, nil
}
