package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// BenchmarkAdmitUnderMailboxCaps admits 4 accounts of a task with 10 000
// queued and 32 running, both endpoints capping each mailbox's
// connections (as Gmail's and Microsoft 365's profiles do): the statement
// every freed slot runs under EventsLock. The admission is rolled back
// each time. "per account" is the statement as it was, which counted each
// ready account's mailbox with a function call; "whole queue" counts every
// mailbox's held connections once (mailbox_holdings, migration 0030) over
// every waiting account; "prefix" reads only the first waiting accounts
// (migration 0039), with caps and without.
func BenchmarkAdmitUnderMailboxCaps(b *testing.B) {
	store, pool, _ := newStore(b)
	ctx := context.Background()
	task := addTask(b, store)
	var csv bytes.Buffer
	for i := range 10_000 {
		fmt.Fprintf(&csv, "user%05d@old.example,pw\n", i)
	}
	if _, err := migration.NewService(store).ImportAccounts(ctx, task, csv.Bytes()); err != nil {
		b.Fatal(err)
	}
	for _, stmt := range []string{
		"UPDATE tasks SET state = 'running'",
		"UPDATE accounts SET state = 'queued'",
		"UPDATE accounts SET state = 'running' WHERE id IN (SELECT id FROM accounts ORDER BY id LIMIT 32)",
		"ANALYZE",
		heldPerAccount,
		admissibleWholeQueue,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	params := dbsqlc.AccountsAdmitParams{TaskID: task, Count: 4,
		SourceConnections: migration.SourceConnections, DestinationConnections: migration.DestinationConnections,
		SourceAccountConnections: 15, DestinationAccountConnections: 20}
	admit := func(b *testing.B, run func(q *dbsqlc.Queries, tx pgx.Tx) (int, error)) {
		for b.Loop() {
			tx, err := pool.Begin(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n, err := run(dbsqlc.New(tx), tx)
			if err != nil || n != 4 {
				b.Fatalf("admitted %d: %v", n, err)
			}
			if err := tx.Rollback(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("per account", func(b *testing.B) {
		admit(b, func(_ *dbsqlc.Queries, tx pgx.Tx) (int, error) {
			tag, err := tx.Exec(ctx, admitPerAccount, params.TaskID, params.SourceAccountConnections, "h",
				params.SourceConnections, params.DestinationConnections, params.DestinationAccountConnections, "h", params.Count)
			return int(tag.RowsAffected()), err
		})
	})
	b.Run("whole queue", func(b *testing.B) {
		admit(b, func(_ *dbsqlc.Queries, tx pgx.Tx) (int, error) {
			tag, err := tx.Exec(ctx, `UPDATE accounts SET run_admitted = true, run_generation = run_generation + 1, updated_at = now()
				WHERE id IN (SELECT accounts_admissible_whole_queue($1, $2, $3, $4, $5, $6))`,
				params.TaskID, params.SourceConnections, params.DestinationConnections,
				params.SourceAccountConnections, params.DestinationAccountConnections, params.Count)
			return int(tag.RowsAffected()), err
		})
	})
	b.Run("prefix", func(b *testing.B) {
		admit(b, func(q *dbsqlc.Queries, _ pgx.Tx) (int, error) {
			admitted, err := q.AccountsAdmit(ctx, params)
			return len(admitted), err
		})
	})
	b.Run("prefix, no caps", func(b *testing.B) {
		uncapped := params
		uncapped.SourceAccountConnections, uncapped.DestinationAccountConnections = 0, 0
		admit(b, func(q *dbsqlc.Queries, _ pgx.Tx) (int, error) {
			admitted, err := q.AccountsAdmit(ctx, uncapped)
			return len(admitted), err
		})
	})
}

// admissibleWholeQueue is accounts_admissible as migration 0030 made it,
// reading every waiting account of the task: the reference of "prefix".
const admissibleWholeQueue = `
CREATE FUNCTION accounts_admissible_whole_queue(task bigint, per_source int, per_destination int, source_cap int, destination_cap int, n int)
RETURNS SETOF bigint LANGUAGE sql STABLE AS $$
    SELECT ready.id FROM (
        SELECT r.id,
               row_number() OVER (PARTITION BY lower(a.source_login) ORDER BY r.id) AS source_turn,
               row_number() OVER (PARTITION BY lower(a.destination_login) ORDER BY r.id) AS destination_turn,
               coalesce(hs.source_holds * per_source + hs.destination_holds * per_destination, 0) AS source_held,
               coalesce(hd.source_holds * per_source + hd.destination_holds * per_destination, 0) AS destination_held
        FROM accounts_ready r
        JOIN accounts a ON a.id = r.id
        JOIN tasks t ON t.id = r.task_id
        JOIN endpoints se ON se.id = t.source_endpoint_id
        JOIN endpoints de ON de.id = t.destination_endpoint_id
        LEFT JOIN mailbox_holdings hs ON source_cap > 0 AND hs.host = lower(se.host) AND hs.login = lower(a.source_login)
        LEFT JOIN mailbox_holdings hd ON destination_cap > 0 AND hd.host = lower(de.host) AND hd.login = lower(a.destination_login)
        WHERE r.task_id = task
    ) ready
    WHERE (source_cap = 0 OR ready.source_held + ready.source_turn * per_source <= source_cap
           OR (ready.source_held = 0 AND ready.source_turn = 1))
      AND (destination_cap = 0 OR ready.destination_held + ready.destination_turn * per_destination <= destination_cap
           OR (ready.destination_held = 0 AND ready.destination_turn = 1))
    ORDER BY ready.id
    LIMIT n
$$`

// heldPerAccount is the function AccountsAdmit called for each ready
// account's mailbox before migration 0030 (which drops it), created in
// the benchmark's own database; admitPerAccount is the statement that
// called it: the reference of BenchmarkAdmitUnderMailboxCaps.
const heldPerAccount = `
CREATE FUNCTION held_per_account(mailbox_host text, mailbox_login text, per_source int, per_destination int)
RETURNS int LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(CASE WHEN lower(se.host) = mailbox_host AND lower(a.source_login) = mailbox_login THEN per_source ELSE 0 END
                      + CASE WHEN lower(de.host) = mailbox_host AND lower(a.destination_login) = mailbox_login THEN per_destination ELSE 0 END), 0)::int
    FROM accounts_holding_room h
    JOIN accounts a ON a.id = h.id
    JOIN tasks t ON t.id = h.task_id
    JOIN endpoints se ON se.id = t.source_endpoint_id
    JOIN endpoints de ON de.id = t.destination_endpoint_id
    WHERE lower(a.source_login) = mailbox_login OR lower(a.destination_login) = mailbox_login
$$`

const admitPerAccount = `
UPDATE accounts
SET run_admitted = true, run_generation = run_generation + 1, updated_at = now()
WHERE id IN (
    SELECT ready.id FROM (
        SELECT r.id,
               row_number() OVER (PARTITION BY lower(a.source_login) ORDER BY r.id) AS source_turn,
               row_number() OVER (PARTITION BY lower(a.destination_login) ORDER BY r.id) AS destination_turn,
               CASE WHEN $2::int > 0 THEN held_per_account($3::text, lower(a.source_login), $4::int, $5::int) ELSE 0 END AS source_held,
               CASE WHEN $6::int > 0 THEN held_per_account($7::text, lower(a.destination_login), $4::int, $5::int) ELSE 0 END AS destination_held
        FROM accounts_ready r
        JOIN accounts a ON a.id = r.id
        WHERE r.task_id = $1
    ) ready
    WHERE ($2 = 0 OR ready.source_held + ready.source_turn * $4 <= $2 OR (ready.source_held = 0 AND ready.source_turn = 1))
      AND ($6 = 0 OR ready.destination_held + ready.destination_turn * $5 <= $6 OR (ready.destination_held = 0 AND ready.destination_turn = 1))
    ORDER BY ready.id
    LIMIT $8::int)`
