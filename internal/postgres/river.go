package postgres

// Every use of River's own tables (the job queue) is in this file: through
// River's client, or in plain SQL, since River migrates its tables itself
// and sqlc's schema does not have them. The rest of the store asks for
// jobs in the domain's terms.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/mailmigrate/mailmigrate/internal/metrics"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// newJobInserter returns a River client that inserts jobs in the store's
// transactions; it runs none.
func newJobInserter(pool *pgxpool.Pool) (*river.Client[pgx.Tx], error) {
	return river.NewClient(riverpgxv5.New(pool), &river.Config{
		// Every insert wakes the workers at once: River otherwise sends
		// one notification per queue per 100 ms, and an admission in
		// between would wait for the workers' next poll.
		FetchCooldown: time.Millisecond,
	})
}

// migrateRiver brings River's own tables up to date.
func migrateRiver(ctx context.Context, pool *pgxpool.Pool) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}

// taskMetadata is the metadata of a task's jobs: it finds them for a
// cancel.
func taskMetadata(taskID int64) string { return fmt.Sprintf(`{"task_id": %d}`, taskID) }

// insertAttemptJobs queues migration jobs, one per attempt; River tries
// each once: the engine retries transient failures itself, an attempt that
// fails on a transient fault is followed by a new job (retryAttempt), and a job whose process died is
// replaced by the lease expiry.
func (s *Store) insertAttemptJobs(ctx context.Context, tx pgx.Tx, jobs []migration.AttemptJob) error {
	return insertTaskJobs(ctx, s, tx, migration.QueueAttempts, jobs, func(j migration.AttemptJob) int64 { return j.TaskID })
}

// insertTestJobs queues connection tests. One attempt each: a repeated
// failed login can lock an account out.
func (s *Store) insertTestJobs(ctx context.Context, tx pgx.Tx, jobs []migration.AccountTestJob) error {
	return insertTaskJobs(ctx, s, tx, migration.QueueTests, jobs, func(j migration.AccountTestJob) int64 { return j.TaskID })
}

// insertTaskJobs queues jobs on queue for one attempt each, with their
// task in the metadata (cancelTaskJobs finds them by it).
func insertTaskJobs[T river.JobArgs](ctx context.Context, s *Store, tx pgx.Tx, queue string, jobs []T, taskOf func(T) int64) error {
	if len(jobs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, job := range jobs {
		params[i] = river.InsertManyParams{Args: job, InsertOpts: &river.InsertOpts{
			Queue: queue, MaxAttempts: 1, Metadata: []byte(taskMetadata(taskOf(job)))}}
	}
	_, err := s.jobs.InsertManyTx(ctx, tx, params)
	return err
}

// scheduleAdmission queues an admission for when a retry's delay ends.
func (s *Store) scheduleAdmission(ctx context.Context, tx pgx.Tx, at time.Time) error {
	_, err := s.jobs.InsertTx(ctx, tx, migration.AdmitJob{}, &river.InsertOpts{
		Queue: migration.QueueControl, ScheduledAt: at, MaxAttempts: 3,
	})
	return err
}

// unfinishedTaskJobs lists the task's jobs of kind that have not finished.
func unfinishedTaskJobs(kind string, taskID int64) *river.JobListParams {
	return river.NewJobListParams().
		Kinds(kind).
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStateRunning).
		Metadata(taskMetadata(taskID)).
		First(10000)
}

// cancelTaskJobs cancels the task's jobs of T's kind that have not
// finished (cancelJobs).
func cancelTaskJobs[T river.JobArgs](ctx context.Context, s *Store, tx pgx.Tx, taskID int64) ([]T, error) {
	var kind T
	return cancelJobs[T](ctx, s, tx, unfinishedTaskJobs(kind.Kind(), taskID))
}

// cancelAccountJobs cancels the attempt jobs of some accounts of a task,
// wherever they run: their context is canceled, so that they stop at once
// rather than at their next lease renewal.
func cancelAccountJobs(ctx context.Context, s *Store, tx pgx.Tx, taskID int64, accounts []int64) error {
	if len(accounts) == 0 {
		return nil
	}
	params := unfinishedTaskJobs(migration.AttemptJob{}.Kind(), taskID).
		Where(`(args ->> 'account_id')::bigint = ANY (@accounts::bigint[])`, river.NamedArgs{"accounts": accounts})
	_, err := cancelJobs[migration.AttemptJob](ctx, s, tx, params)
	return err
}

// cancelJobs cancels the jobs params lists, and returns the arguments of
// those that had not started: they never will. A running one has its
// context canceled, wherever it runs.
func cancelJobs[T river.JobArgs](ctx context.Context, s *Store, tx pgx.Tx, params *river.JobListParams) ([]T, error) {
	jobs, err := s.jobs.JobListTx(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	var unstarted []T
	for _, job := range jobs.Jobs {
		canceled, err := s.jobs.JobCancelTx(ctx, tx, job.ID)
		if err != nil {
			return nil, err
		}
		if canceled.State != rivertype.JobStateCancelled {
			continue
		}
		var args T
		if err := json.Unmarshal(canceled.EncodedArgs, &args); err != nil {
			return nil, err
		}
		unstarted = append(unstarted, args)
	}
	return unstarted, nil
}

// strandedAttemptJobs lists the migration jobs a process took from the queue
// but never started: it died between the two. Such a job stays running in
// the queue with its account still queued under its generation; starting
// takes milliseconds, so one older than expiry belongs to a dead process.
func strandedAttemptJobs(expiry time.Duration) *river.JobListParams {
	return river.NewJobListParams().Kinds(migration.AttemptJob{}.Kind()).States(rivertype.JobStateRunning).First(10000).
		Where(`attempted_at < now() - make_interval(secs => @age) AND EXISTS (
			SELECT 1 FROM accounts a WHERE a.id = (river_job.args ->> 'account_id')::bigint
			AND a.state = @queued AND a.run_admitted AND a.run_generation = (river_job.args ->> 'generation')::bigint)`,
			river.NamedArgs{"age": expiry.Seconds(), "queued": string(migration.AccountQueued)})
}

// deadTestJobs lists the connection tests running for longer than
// deadTestAfter.
func deadTestJobs() *river.JobListParams {
	return river.NewJobListParams().Kinds(migration.AccountTestJob{}.Kind()).States(rivertype.JobStateRunning).First(10000).
		Where(`attempted_at < now() - make_interval(secs => @age)`, river.NamedArgs{"age": deadTestAfter.Seconds()})
}

// deadTestAfter is how long a connection test job may run before it is
// taken for the job of a dead process: a test gives up on each side within
// about a minute (worker.loginTuning), so one this old has no process.
const deadTestAfter = 5 * time.Minute

// deadJobsFound reports whether a dead process left stranded migration
// jobs or connection tests behind.
func (s *Store) deadJobsFound(ctx context.Context, expiry time.Duration) (bool, error) {
	for _, params := range []*river.JobListParams{strandedAttemptJobs(expiry), deadTestJobs()} {
		jobs, err := s.jobs.JobList(ctx, params.First(1))
		if err != nil || len(jobs.Jobs) > 0 {
			return err == nil, err
		}
	}
	return false, nil
}

// strandedAttempts returns the jobs of strandedAttemptJobs.
func (s *Store) strandedAttempts(ctx context.Context, tx pgx.Tx, expiry time.Duration) ([]migration.AttemptJob, error) {
	stranded, err := s.jobs.JobListTx(ctx, tx, strandedAttemptJobs(expiry))
	if err != nil {
		return nil, err
	}
	attempts := make([]migration.AttemptJob, len(stranded.Jobs))
	for i, job := range stranded.Jobs {
		if err := json.Unmarshal(job.EncodedArgs, &attempts[i]); err != nil {
			return nil, err
		}
	}
	return attempts, nil
}

// discardJobSQL takes a dead process's job out of River's running jobs.
const discardJobSQL = `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1 AND state = 'running'`

// discardDeadTests takes the connection tests of deadTestJobs out of the
// queue and returns them, so that each is ended once.
func (s *Store) discardDeadTests(ctx context.Context, tx pgx.Tx) ([]migration.AccountTestJob, error) {
	dead, err := s.jobs.JobListTx(ctx, tx, deadTestJobs())
	if err != nil {
		return nil, err
	}
	var discarded []migration.AccountTestJob
	for _, job := range dead.Jobs {
		var args migration.AccountTestJob
		if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
			return nil, err
		}
		tag, err := tx.Exec(ctx, discardJobSQL, job.ID)
		if err != nil {
			return nil, err
		}
		if tag.RowsAffected() > 0 {
			discarded = append(discarded, args)
		}
	}
	return discarded, nil
}

// jobCountsSQL uses River's index on state.
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
