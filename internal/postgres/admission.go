package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// admit starts the waiting accounts that have room now (migration.Admit
// decides which), each with a new job, in a transaction that holds
// EventsLock. Every transaction that frees room or queues accounts calls
// it before it commits: a slot passes to the next account at once, in
// whatever process, and a waiting account has no job and costs nothing.
func (s *Store) admit(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries) error {
	rows, err := q.AdmissionTasks(ctx, dbsqlc.AdmissionTasksParams{
		DefaultParallel: migration.DefaultParallelAccounts, MaxWaiting: migration.MaxParallelAccounts,
	})
	if err != nil || len(rows) == 0 {
		return err
	}
	tasks := make([]migration.WaitingTask, len(rows))
	for i, r := range rows {
		tasks[i] = migration.WaitingTask{ID: r.ID, ParallelAccounts: int(r.ParallelAccounts),
			SourceHost: r.SourceHost, DestinationHost: r.DestinationHost, Holding: int(r.Holding), Waiting: int(r.Waiting),
			SourceHostConnections: int(r.SourceMaxConnections), DestinationHostConnections: int(r.DestinationMaxConnections)}
	}
	held := map[string]int{}
	if len(migration.HostConnectionCaps(tasks, s.limits)) > 0 {
		hosts, err := q.HostConnectionsHeld(ctx, dbsqlc.HostConnectionsHeldParams{
			SourceConnections: migration.SourceConnections, DestinationConnections: migration.DestinationConnections,
		})
		if err != nil {
			return err
		}
		for _, h := range hosts {
			held[h.Host] = int(h.Connections)
		}
	}
	admissions := migration.Admit(tasks, held, s.limits)
	var jobs []migration.AttemptJob
	for i, t := range tasks {
		n := admissions[t.ID]
		if n == 0 {
			continue
		}
		r := rows[i]
		admitted, err := q.AccountsAdmit(ctx, dbsqlc.AccountsAdmitParams{TaskID: t.ID, Count: int32(n),
			SourceConnections: migration.SourceConnections, DestinationConnections: migration.DestinationConnections,
			SourceAccountConnections:      int32(accountConnections(r.SourceProfile, r.SourceHost, r.SourceMaxAccountConnections)),
			DestinationAccountConnections: int32(accountConnections(r.DestinationProfile, r.DestinationHost, r.DestinationMaxAccountConnections)),
		})
		if err != nil {
			return err
		}
		for _, a := range admitted {
			jobs = append(jobs, migration.AttemptJob{TaskID: t.ID, AccountID: a.ID, Generation: a.RunGeneration})
		}
	}
	return s.insertAttemptJobs(ctx, tx, jobs)
}

// Admit starts the waiting accounts that have room: those whose retry
// delay has passed, and any that a crash left waiting.
func (s *Store) Admit(ctx context.Context) error {
	if s.jobsErr != nil {
		return s.jobsErr
	}
	// Most of the time nothing is ready: look before taking the lock
	// that every event writer waits for.
	if possible, err := s.queries.AdmissionPossible(ctx); err != nil || !possible {
		return interpretError(err)
	}
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		return s.admit(ctx, tx, q)
	}))
}

// accountConnections bounds the connections to one mailbox of an
// endpoint: its own bound, else its provider's (0: none).
func accountConnections(profile, host string, own int32) int {
	p := provider.ProfileAuto
	if profile != string(migration.ProfileAuto) {
		p = provider.Profile(profile)
	}
	return provider.EffectiveLimits(provider.ServerProfile(p, host), provider.Limits{AccountConnections: int(own)}).AccountConnections
}
