package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// AttemptStart starts the account of an admitted job, marking the
// task running with its first account, logs its account.started event,
// and returns what the attempt needs; false when it did not start it: a job
// that no longer holds its account (canceled, or queued again under a
// newer generation) changes nothing.
func (s *Store) AttemptStart(ctx context.Context, job migration.AttemptJob) (migration.StartedAttempt, bool, error) {
	var run migration.StartedAttempt
	var sealedSource, sealedDestination []byte
	started := false
	// Every change of an account into or out of running holds EventsLock
	// too: admission counts what runs.
	err := s.inEventsTx(ctx, func(_ pgx.Tx, q *dbsqlc.Queries) error {
		transition, _, err := decideAccount(ctx, q, job.TaskID, job.AccountID,
			migration.AccountTrigger{Kind: migration.TriggerStart, Generation: job.Generation})
		if err == pgx.ErrNoRows {
			return nil // deleted
		}
		if err != nil || transition.Move != migration.MoveStart {
			return err
		}
		from, to := guard(transition.Move)
		if err := q.AttemptStart(ctx, dbsqlc.AttemptStartParams{TaskID: job.TaskID, ID: job.AccountID, FromStates: from, ToState: to,
			TaskFrom: string(migration.TaskQueued), TaskTo: string(migration.TaskRunning)}); err != nil {
			return err
		}
		row, err := q.AttemptContext(ctx, dbsqlc.AttemptContextParams{TaskID: job.TaskID, ID: job.AccountID,
			VerifyingStarters: texts(migration.VerifyingPassStarters)})
		if err != nil {
			return err
		}
		task, err := s.taskFromRow(row.TaskView)
		if err != nil {
			return err
		}
		run = migration.StartedAttempt{Task: task, Account: accountFromRow(row.AccountView), Verifying: row.Verifying}
		sealedSource, sealedDestination = row.SourcePassword, row.DestinationPassword
		if run.Source, err = s.endpointForLogin(row.Endpoint); err != nil {
			return err
		}
		if run.Destination, err = s.endpointForLogin(row.Endpoint_2); err != nil {
			return err
		}
		started = true
		return appendEvent(ctx, q, run.StartedEvent())
	})
	if err != nil || !started {
		return migration.StartedAttempt{}, false, interpretError(err)
	}
	// Opened once the events lock is released; a password that does not
	// open fails the attempt, not its start.
	run.Credentials, run.CredentialsErr = s.openCredentials(job.AccountID, run.Account.SourceLogin, sealedSource,
		run.Account.DestinationLogin, sealedDestination)
	return run, true, nil
}

// AttemptRenew renews the lease of a job's running account and says
// whether the job is to stop: its task is being canceled or held, or the
// account alone; migration.ErrLeaseLost when the job no longer holds the
// account.
func (s *Store) AttemptRenew(ctx context.Context, job migration.AttemptJob) (bool, error) {
	lease, err := s.queries.AttemptRenew(ctx, dbsqlc.AttemptRenewParams{
		TaskID: job.TaskID, ID: job.AccountID, RunGeneration: job.Generation,
	})
	if err == pgx.ErrNoRows {
		return false, migration.ErrLeaseLost
	}
	return lease.State == string(migration.TaskCanceling) || lease.RunCancel || lease.Held, interpretError(err)
}

// RequeueLostAttempts finds running accounts whose lease expired (their
// process died) and queues each again under a new generation with a new
// job, so that another process continues where the stored sync state
// says; an account of a task being canceled ends canceled instead. It
// also ends the connection tests of dead processes. It returns how many
// accounts it handled.
func (s *Store) RequeueLostAttempts(ctx context.Context, expiry time.Duration) (int, error) {
	if s.jobsErr != nil {
		return 0, s.jobsErr
	}
	// Most of the time nothing died: look before taking the lock that
	// every event writer waits for.
	if found, err := s.deadWorkFound(ctx, expiry); err != nil || !found {
		return 0, interpretError(err)
	}
	handled := 0
	err := s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		expired, err := q.AttemptsLost(ctx, expiry.Seconds())
		if err != nil {
			return err
		}
		for _, a := range expired {
			if _, err := s.workerLost(ctx, tx, q, migration.AttemptJob{TaskID: a.TaskID, AccountID: a.ID, Generation: a.RunGeneration}); err != nil {
				return err
			}
		}
		stranded, err := s.requeueStranded(ctx, tx, q, expiry)
		if err != nil {
			return err
		}
		tests, err := s.endDeadTests(ctx, tx, q)
		if err != nil {
			return err
		}
		handled = len(expired) + stranded + tests
		return s.admit(ctx, tx, q)
	})
	return handled, interpretError(err)
}

// deadWorkFound reports whether RequeueLostAttempts has anything to do.
func (s *Store) deadWorkFound(ctx context.Context, expiry time.Duration) (bool, error) {
	expired, err := s.queries.AttemptsLostExist(ctx, expiry.Seconds())
	if err != nil || expired {
		return expired, err
	}
	return s.deadJobsFound(ctx, expiry)
}

// endDeadTests ends the connection tests that a dead process was running:
// each is recorded as failed on both sides, so that the task leaves
// testing, and its job is discarded so it is never counted twice.
func (s *Store) endDeadTests(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries) (int, error) {
	dead, err := s.discardDeadTests(ctx, tx)
	if err != nil {
		return 0, err
	}
	for _, job := range dead {
		if err := s.recordTest(ctx, tx, q, migration.LostTestOutcome(job)); err != nil {
			return 0, err
		}
	}
	return len(dead), nil
}

// requeueStranded queues again the accounts of stranded jobs
// (strandedAttemptJobs), checked again under the account's row lock.
func (s *Store) requeueStranded(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, expiry time.Duration) (int, error) {
	stranded, err := s.strandedAttempts(ctx, tx, expiry)
	if err != nil {
		return 0, err
	}
	requeued := 0
	for _, job := range stranded {
		moved, err := s.workerLost(ctx, tx, q, job)
		if err != nil {
			return requeued, err
		}
		if moved {
			requeued++
		}
	}
	return requeued, nil
}

// workerLost moves the account of a job whose process died, as the domain
// decides (TriggerLost): queued again under a new generation, with a new
// job, so that another process continues where the stored sync state
// says, and an event that says so; ended canceled when a cancel was under
// way. False when the job no longer held the account (or it was deleted).
func (s *Store) workerLost(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, job migration.AttemptJob) (bool, error) {
	transition, login, err := decideAccount(ctx, q, job.TaskID, job.AccountID,
		migration.AccountTrigger{Kind: migration.TriggerLost, Generation: job.Generation})
	if err == pgx.ErrNoRows {
		return false, nil // deleted
	}
	if err != nil {
		return false, err
	}
	switch transition.Move {
	case migration.MoveEnd:
		return true, s.endAttempt(ctx, tx, q, migration.CanceledAttemptOutcome(job.TaskID, job.AccountID, job.Generation, login), transition)
	case migration.MoveRequeue:
		from, to := guard(transition.Move)
		queued, err := q.AccountQueue(ctx, dbsqlc.AccountQueueParams{TaskID: job.TaskID, ID: job.AccountID, NewRun: false,
			FromStates: from, ToState: to})
		if err != nil {
			return false, err
		}
		return true, appendEvent(ctx, q, migration.RequeuedEvent(job.TaskID, job.AccountID, queued.SourceLogin))
	}
	return false, nil
}

// TaskCancel asks a queued or running pass to stop: accounts not started
// are canceled at once, running ones have their job canceled and end
// canceled when their worker has stopped; the task ends canceled after the
// last. A connection test stops likewise (cancelTests). A task that is not
// running answers ErrTaskNotRunning. It returns how many accounts (or
// tests) stop.
func (s *Store) TaskCancel(ctx context.Context, taskID int64) (int, error) {
	var stopping int
	err := s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		_, transition, err := decide(ctx, q, taskID, migration.CommandCancel)
		if err != nil {
			return err
		}
		if transition.To != migration.TaskCanceling {
			// No pass to stop: the login test alone.
			stopping, err = s.cancelTestsOnly(ctx, tx, q, taskID)
			return err
		}
		before, err := q.TaskCancel(ctx, dbsqlc.TaskCancelParams{ID: taskID, CancelableStates: texts(migration.CancelableTaskStates)})
		if err != nil {
			return err
		}
		if before == string(migration.TaskTesting) {
			stopping, err = s.cancelTests(ctx, tx, q, taskID)
			return err
		}
		from, to := guard(migration.MoveCancel)
		canceled, err := q.AccountsCancelQueued(ctx, dbsqlc.AccountsCancelQueuedParams{TaskID: taskID, FromStates: from, ToState: to})
		if err != nil {
			return err
		}
		if err := q.AccountPassesRecordCanceled(ctx, dbsqlc.AccountPassesRecordCanceledParams{TaskID: taskID, Ids: canceled}); err != nil {
			return err
		}
		task, err := q.TaskJobsEnded(ctx, dbsqlc.TaskJobsEndedParams{ID: taskID, Jobs: int32(len(canceled))})
		if err != nil {
			return err
		}
		stopping = len(canceled) + int(max(task.PendingJobs, 0))
		if task.PendingJobs <= 0 {
			if err := s.cancelTestsAlongside(ctx, tx, q, taskID); err != nil {
				return err
			}
			return endPass(ctx, q, taskID, true)
		}
		// Admitted accounts were canceled with the others: their room
		// goes to other tasks now.
		if err := s.admit(ctx, tx, q); err != nil {
			return err
		}
		if _, err = cancelTaskJobs[migration.AttemptJob](ctx, s, tx, taskID); err != nil {
			return err
		}
		return s.cancelTestsAlongside(ctx, tx, q, taskID)
	})
	return stopping, interpretError(err)
}

// cancelTestsOnly stops the login test of a task that runs no pass, with a
// test.canceled event; ErrTaskNotRunning when no test is under way.
func (s *Store) cancelTestsOnly(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64) (int, error) {
	pending, err := q.TaskTestsPending(ctx, taskID)
	if err != nil || pending == 0 {
		return 0, cmp.Or(err, migration.ErrTaskNotRunning)
	}
	stopping, err := s.cancelTests(ctx, tx, q, taskID)
	if err != nil {
		return 0, err
	}
	task, err := q.TaskViewGet(ctx, taskID)
	if err != nil {
		return 0, err
	}
	return stopping, appendEvent(ctx, q, migration.TestCanceledEvent(taskID, int64(task.TestsTotal), int64(task.TestsDone), int64(task.TestsFailed)))
}

// cancelTestsAlongside stops, with the pass they ran beside, the
// connection tests begun while the task ran (testAlongside).
func (s *Store) cancelTestsAlongside(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64) error {
	pending, err := q.TaskTestsPending(ctx, taskID)
	if err != nil || pending == 0 {
		return err
	}
	_, err = s.cancelTests(ctx, tx, q, taskID)
	return err
}

// AccountsCancel stops the accounts filter selects of a task's pass, and
// lets the others go on: queued ones end canceled at once, running ones
// when their job has stopped (it is canceled, and its lease renewal says
// so too). The task ends after the last account of its pass, in the state
// they give together. ErrTaskNotRunning answers for a task that is not
// running, ErrNoMigrationRunning for one testing or canceling,
// ErrNoRunningAccountSelected for a filter that selects no account in the
// pass. It returns how many accounts stop.
func (s *Store) AccountsCancel(ctx context.Context, taskID int64, filter migration.AccountFilter) (int, error) {
	var stopping int
	err := s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		if _, _, err := decide(ctx, q, taskID, migration.CommandCancelSome); err != nil {
			return err
		}
		f := selection(taskID, filter)
		from, to := guard(migration.MoveCancel)
		waiting, err := q.AccountsCancelWaiting(ctx, dbsqlc.AccountsCancelWaitingParams{TaskID: taskID, FromStates: from, ToState: to,
			Ids: f.Ids, States: f.States, Search: f.Search, LoginTest: f.LoginTest})
		if err != nil {
			return err
		}
		if err := q.AccountPassesRecordCanceled(ctx, dbsqlc.AccountPassesRecordCanceledParams{TaskID: taskID, Ids: waiting}); err != nil {
			return err
		}
		running, err := q.AccountsCancelRunning(ctx, dbsqlc.AccountsCancelRunningParams{TaskID: taskID,
			FromStates: texts(migration.MoveStop.From()), Ids: f.Ids, States: f.States, Search: f.Search, LoginTest: f.LoginTest})
		if err != nil {
			return err
		}
		stopping = len(waiting) + len(running)
		if stopping == 0 {
			return migration.ErrNoRunningAccountSelected
		}
		event := migration.AccountsCanceledEvent(taskID, int64(len(waiting)), int64(len(running)))
		if len(filter.IDs) == 1 {
			event.AccountID = filter.IDs[0]
		}
		if err := appendEvent(ctx, q, event); err != nil {
			return err
		}
		if err := cancelAccountJobs(ctx, s, tx, taskID, running); err != nil {
			return err
		}
		if len(waiting) == 0 {
			return nil
		}
		task, err := q.TaskJobsEnded(ctx, dbsqlc.TaskJobsEndedParams{ID: taskID, Jobs: int32(len(waiting))})
		if err != nil {
			return err
		}
		if task.PendingJobs <= 0 {
			return endPass(ctx, q, taskID, false)
		}
		// The room of admitted accounts goes to others now.
		return s.admit(ctx, tx, q)
	})
	return stopping, interpretError(err)
}

// cancelTests stops a task's connection test: tests not queued yet are
// dropped, queued ones whose job has not started end now, and running
// ones when their worker notices; the task returns to the state it had
// before the test after the last. It returns how many tests stop.
func (s *Store) cancelTests(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64) (int, error) {
	dropped, err := q.AccountsTestCancelWaiting(ctx, taskID)
	if err != nil {
		return 0, err
	}
	unstarted, err := cancelTaskJobs[migration.AccountTestJob](ctx, s, tx, taskID)
	if err != nil {
		return 0, err
	}
	for _, job := range unstarted {
		ended, err := q.AccountTestEnd(ctx, dbsqlc.AccountTestEndParams{
			TaskID: taskID, ID: job.AccountID, TestGeneration: job.Generation,
		})
		if err != nil {
			return 0, err
		}
		dropped += ended
	}
	if dropped == 0 {
		pending, err := q.TaskPendingJobs(ctx, taskID)
		return int(pending), err
	}
	remaining, err := finishTestJobs(ctx, q, taskID, int(dropped))
	return int(dropped) + remaining, err
}

// AccountProgressSet stores how far an account's attempt is.
func (s *Store) AccountProgressSet(ctx context.Context, taskID, accountID int64, p migration.Progress) error {
	return interpretError(progressSet(ctx, s.queries, taskID, accountID, p))
}

// AccountProgressReport stores how far an account's attempt is and logs
// events (account.progress, folder.done) with it, in order.
func (s *Store) AccountProgressReport(ctx context.Context, taskID, accountID int64, p migration.Progress, events ...migration.Event) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		if err := progressSet(ctx, q, taskID, accountID, p); err != nil {
			return err
		}
		return appendEvents(ctx, q, events)
	}))
}

// AccountThrottled stores that a server throttled an account's attempt, which
// pauses until until, with its figures and the account.throttled event.
func (s *Store) AccountThrottled(ctx context.Context, taskID, accountID int64, p migration.Progress, until time.Time, event migration.Event) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		if err := pausedProgressSet(ctx, q, taskID, accountID, p, pgtype.Timestamptz{Time: until, Valid: true}); err != nil {
			return err
		}
		return appendEvents(ctx, q, []migration.Event{event})
	}))
}

// RecordAttempt stores how an account's attempt ended, with its events,
// and counts the job done; after the task's last account the task's state
// says how the pass went, and a run.finished event says it too. The
// outcome of a job that no longer holds its account is dropped.
func (s *Store) RecordAttempt(ctx context.Context, outcome migration.AttemptOutcome) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		return s.finishAttempt(ctx, tx, q, outcome)
	}))
}

// finishAttempt applies the outcome of an account's attempt, as the
// domain decides it (TriggerEnd), in a transaction that holds EventsLock:
// the attempt ends, or the account is queued again to go on (retried, parked,
// held). The outcome of a job that no longer holds its account is
// dropped.
func (s *Store) finishAttempt(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, outcome migration.AttemptOutcome) error {
	transition, login, err := decideAccount(ctx, q, outcome.TaskID, outcome.AccountID,
		migration.AccountTrigger{Kind: migration.TriggerEnd, Generation: outcome.Generation, Outcome: &outcome})
	if err == pgx.ErrNoRows {
		return nil // deleted
	}
	if err != nil {
		return err
	}
	switch transition.Move {
	case migration.MoveRetry:
		return s.retryAttempt(ctx, tx, q, outcome, transition)
	case migration.MoveHold:
		// Not canceled: its cancel event is not logged, nor its words
		// kept; it tells that it is held, with its figures.
		held := migration.HeldEvent(outcome.TaskID, outcome.AccountID, login, outcome.Progress)
		outcome.Events, outcome.LastError, outcome.ParkedEvent = nil, "", &held
		transition.ResumeAt = time.Now()
		return s.parkAttempt(ctx, tx, q, outcome, transition)
	case migration.MovePark:
		return s.parkAttempt(ctx, tx, q, outcome, transition)
	case migration.MoveEnd:
		return s.endAttempt(ctx, tx, q, outcome, transition)
	}
	return nil
}

// retryAttempt queues the account of an attempt that failed on a
// transient fault again, for a new attempt to be admitted after the delay of its retry (an admission is
// scheduled then).
func (s *Store) retryAttempt(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, outcome migration.AttemptOutcome, transition migration.AccountTransition) error {
	from, to := guard(transition.Move)
	notBefore, err := q.AttemptRetry(ctx, dbsqlc.AttemptRetryParams{
		TaskID: outcome.TaskID, ID: outcome.AccountID, RunGeneration: outcome.Generation, FromStates: from, ToState: to,
		LastError: outcome.LastError, DelaySeconds: transition.RetryDelay.Seconds(),
	})
	if err != nil {
		return err
	}
	if err := s.scheduleAdmission(ctx, tx, notBefore.Time); err != nil {
		return err
	}
	// The retry carries on from the figures of this attempt.
	if err := progressSet(ctx, q, outcome.TaskID, outcome.AccountID, outcome.Progress); err != nil {
		return err
	}
	if err := appendEvents(ctx, q, outcome.Pending); err != nil {
		return err
	}
	for _, e := range outcome.Events {
		if err := appendEvent(ctx, q, migration.RetryEvent(e, transition.Retry, len(outcome.RetryDelays), transition.RetryDelay)); err != nil {
			return err
		}
	}
	// Its room goes to the next account meanwhile.
	return s.admit(ctx, tx, q)
}

// parkAttempt queues the account of an attempt that ended on a long pause, or
// stopped for its task's hold, again, to be admitted when the pause ends;
// its ParkedEvent (a pause's account.throttled, a hold's account.held) is
// logged with it.
func (s *Store) parkAttempt(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, outcome migration.AttemptOutcome, transition migration.AccountTransition) error {
	from, to := guard(transition.Move)
	resumeAt := pgtype.Timestamptz{Time: transition.ResumeAt, Valid: true}
	if _, err := q.AttemptPark(ctx, dbsqlc.AttemptParkParams{
		TaskID: outcome.TaskID, ID: outcome.AccountID, RunGeneration: outcome.Generation, FromStates: from, ToState: to,
		ResumeAt: resumeAt, LastError: outcome.LastError,
	}); err != nil {
		return err
	}
	if err := s.scheduleAdmission(ctx, tx, transition.ResumeAt); err != nil {
		return err
	}
	// It goes on from the figures of this attempt, and shows until when it waits.
	if err := pausedProgressSet(ctx, q, outcome.TaskID, outcome.AccountID, outcome.Progress, resumeAt); err != nil {
		return err
	}
	// Its pause is told with those figures, and moves the pages that show
	// the account to read it again (queued, paused until).
	events := outcome.Pending
	if outcome.ParkedEvent != nil {
		events = append(events, *outcome.ParkedEvent)
	}
	if err := appendEvents(ctx, q, events); err != nil {
		return err
	}
	// Its room goes to the next account meanwhile.
	return s.admit(ctx, tx, q)
}

// endAttempt ends an account's attempt in the state transition gives, with its
// figures and events, and ends the task's pass after its last account.
func (s *Store) endAttempt(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, outcome migration.AttemptOutcome, transition migration.AccountTransition) error {
	p := outcome.Progress
	ended, err := q.AttemptFinish(ctx, dbsqlc.AttemptFinishParams{
		TaskID: outcome.TaskID, ID: outcome.AccountID, RunGeneration: outcome.Generation, FromStates: texts(transition.Move.From()),
		State: string(transition.To), LastError: outcome.LastError, LoginRefused: outcome.LoginRefused,
		FoldersTotal: p.FoldersTotal, FoldersDone: p.FoldersDone, MessagesTotal: p.MessagesTotal,
		MessagesCopied: p.MessagesCopied, MessagesSkipped: p.MessagesSkipped, MessagesFailed: p.MessagesFailed,
		BytesCopied: p.BytesCopied, SourceCounted: p.SourceCounted, SourceMessages: p.SourceMessages, SourceBytes: p.SourceBytes,
		Scripts: scriptsJSON(outcome.Scripts),
	})
	if err != nil || ended.Ended == 0 {
		return err
	}
	if err := appendEvents(ctx, q, append(outcome.Pending, outcome.Events...)); err != nil {
		return err
	}
	if err := s.admit(ctx, tx, q); err != nil {
		return err
	}
	if ended.PendingJobs > 0 {
		return nil
	}
	return endPass(ctx, q, outcome.TaskID, ended.TaskState == string(migration.TaskCanceling))
}

// endPass gives a task whose pass's last account ended the state the
// domain's rule says, and logs the event that closes the pass.
func endPass(ctx context.Context, q *dbsqlc.Queries, taskID int64, canceling bool) error {
	rows, err := q.AccountStatesByTask(ctx, taskID)
	if err != nil {
		return err
	}
	accounts := migration.AccountCounts{ByState: map[migration.AccountState]int64{}}
	for _, r := range rows {
		accounts.ByState[migration.AccountState(r.State)] = r.Accounts
		accounts.Total += r.Accounts
	}
	state := migration.PassEndState(canceling, accounts)
	if err := q.TaskPassEnd(ctx, dbsqlc.TaskPassEndParams{ID: taskID, State: string(state)}); err != nil {
		return err
	}
	// A pass begun before passes were recorded has none to end.
	ended, err := q.PassEnd(ctx, dbsqlc.PassEndParams{TaskID: taskID, State: string(state)})
	if err != nil {
		return err
	}
	events := []migration.Event{migration.PassEndEvent(taskID, state, accounts)}
	for _, pass := range ended {
		if pass.Pass == pass.FinalPass {
			events = append(events, migration.FinalEndEvent(taskID, int(pass.Pass), state, accounts))
		}
	}
	return appendEvents(ctx, q, events)
}

// progressSet stores an account's figures; the account is no longer
// paused: an attempt that reports progress goes on.
func progressSet(ctx context.Context, q *dbsqlc.Queries, taskID, accountID int64, p migration.Progress) error {
	return pausedProgressSet(ctx, q, taskID, accountID, p, pgtype.Timestamptz{})
}

// pausedProgressSet stores an account's figures and until when it is
// paused (none when not Valid).
func pausedProgressSet(ctx context.Context, q *dbsqlc.Queries, taskID, accountID int64, p migration.Progress, until pgtype.Timestamptz) error {
	return q.AccountProgressSet(ctx, dbsqlc.AccountProgressSetParams{
		PausedUntil: until,
		TaskID:      taskID, ID: accountID,
		FoldersTotal: p.FoldersTotal, FoldersDone: p.FoldersDone, MessagesTotal: p.MessagesTotal,
		MessagesCopied: p.MessagesCopied, MessagesSkipped: p.MessagesSkipped,
		MessagesFailed: p.MessagesFailed, BytesCopied: p.BytesCopied,
		SourceCounted: p.SourceCounted, SourceMessages: p.SourceMessages, SourceBytes: p.SourceBytes,
	})
}

// scriptsJSON is what became of an account's Sieve scripts as stored; nil
// (NULL: keep the last) when the attempt did not move them.
func scriptsJSON(s *migration.ScriptsEnd) []byte {
	if s == nil {
		return nil
	}
	data, _ := json.Marshal(s) // strings and slices of them: cannot fail
	return data
}
