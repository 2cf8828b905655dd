package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// Traffic is the daily byte budgets' ledger of every process on the
// database (sql/queries/traffic.sql).
func (s *Store) Traffic() provider.TrafficLedger { return trafficLedger{s} }

type trafficLedger struct{ s *Store }

// Spend implements provider.TrafficLedger: under the mailbox's lock, the
// last day's hours decide (provider.RoomAt), and the bytes join the
// current hour.
func (l trafficLedger) Spend(ctx context.Context, mailbox provider.Mailbox, direction provider.Direction, sizes []int64, limit int64) (int, time.Time, error) {
	var taken int
	var roomAt time.Time
	err := pgx.BeginFunc(ctx, l.s.pool, func(tx pgx.Tx) error {
		q := l.s.queries.WithTx(tx)
		key := dbsqlc.TrafficLockParams{Server: mailbox.Server, Login: mailbox.Login, Direction: string(direction)}
		if err := q.TrafficLock(ctx, key); err != nil {
			return err
		}
		now := time.Now()
		since := pgtype.Timestamptz{Time: now.Add(-provider.TrafficWindow - time.Hour), Valid: true}
		rows, err := q.TrafficLastDay(ctx, dbsqlc.TrafficLastDayParams{Server: key.Server, Login: key.Login, Direction: key.Direction, Since: since})
		if err != nil {
			return err
		}
		hours := make([]provider.TrafficHour, len(rows))
		for i, r := range rows {
			hours[i] = provider.TrafficHour{Hour: r.Hour.Time, Bytes: r.Bytes}
		}
		var bytes int64
		if taken, bytes, roomAt = provider.Take(hours, sizes, limit); taken == 0 {
			return nil
		}
		return q.TrafficAdd(ctx, dbsqlc.TrafficAddParams{Server: key.Server, Login: key.Login, Direction: key.Direction,
			Hour: pgtype.Timestamptz{Time: now.Truncate(time.Hour), Valid: true}, Bytes: bytes})
	})
	return taken, roomAt, interpretError(err)
}
