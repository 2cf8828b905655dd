package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TaskStartTests queues the connection test of the accounts filter
// selects (not those in a pass) and the first of their jobs, in one
// transaction. A test never changes the task's state: it runs beside a
// pass, an edit, a retry or a schedule, counted in tasks.tests_pending.
// One test at a time: ErrTestRunning. It returns how many accounts it
// selected.
func (s *Store) TaskStartTests(ctx context.Context, taskID int64, filter migration.AccountFilter) (int, error) {
	if s.jobsErr != nil {
		return 0, s.jobsErr
	}
	var n int
	err := s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) (err error) {
		if _, _, err := decide(ctx, q, taskID, migration.CommandTest); err != nil {
			return err
		}
		n, err = s.testAlongside(ctx, tx, q, taskID, filter)
		return err
	})
	return n, interpretError(err)
}

// testAlongside starts the connection test of the accounts filter
// selects, not in a pass: the task's state stays, and the test's jobs are
// counted in tasks.tests_pending (finishTestJobs). One test at a time:
// ErrTestRunning.
func (s *Store) testAlongside(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64, filter migration.AccountFilter) (int, error) {
	queued, err := q.AccountsTestQueue(ctx, dbsqlc.AccountsTestQueueParams(selection(taskID, filter)))
	if err != nil {
		return 0, err
	}
	if queued == 0 {
		return 0, migration.ErrNoAccountSelected
	}
	parallel, err := q.TaskTestsAlongside(ctx, dbsqlc.TaskTestsAlongsideParams{
		ID: taskID, Total: int32(queued), DefaultParallel: migration.DefaultParallelAccounts,
	})
	if err == pgx.ErrNoRows {
		return 0, migration.ErrTestRunning
	}
	if err != nil {
		return 0, err
	}
	return int(queued), s.queueTests(ctx, tx, q, taskID, parallel)
}

// queueTests queues the jobs of the task's next count waiting tests. A
// task has at most its parallelism of tests queued, the next queued as
// one ends (recordTest): tests of many accounts take turns with other
// tasks' in the tests queue, and spare the servers' login limits.
func (s *Store) queueTests(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64, count int32) error {
	next, err := q.AccountsTestNext(ctx, dbsqlc.AccountsTestNextParams{TaskID: taskID, Count: count})
	if err != nil || len(next) == 0 {
		return err
	}
	jobs := make([]migration.AccountTestJob, len(next))
	for i, a := range next {
		jobs[i] = migration.AccountTestJob{TaskID: taskID, AccountID: a.ID, Generation: a.TestGeneration}
	}
	return s.insertTestJobs(ctx, tx, jobs)
}

// TaskStartPass moves a task and the accounts filter selects into
// TaskQueued, with a run.started event, and admits those that have room,
// in one transaction. A selection given while a pass is under way joins it
// instead (joinPass). It returns how many accounts it queued.
func (s *Store) TaskStartPass(ctx context.Context, taskID int64, filter migration.AccountFilter, by migration.PassStarter) (int, error) {
	var n int
	start := func(tx pgx.Tx, q *dbsqlc.Queries) (err error) {
		n, _, err = s.startPass(ctx, tx, q, taskID, filter, by)
		return err
	}
	join := func(tx pgx.Tx, q *dbsqlc.Queries) error {
		return s.joinPass(ctx, tx, q, taskID, func(pass int32) (int64, migration.Event, error) {
			queued, err := q.AccountsQueue(ctx, queueParams(taskID, pass, filter))
			n = int(queued)
			if err == nil && queued == 0 {
				err = migration.ErrNoAccountSelected
			}
			return queued, migration.PassJoinedEvent(taskID, 0, int(pass), queued, ""), err
		})
	}
	command := migration.CommandRunSelection
	if filter.IsZero() {
		command = migration.CommandRun // the whole task runs already, or not
	}
	err := s.startJobs(ctx, taskID, command, start, join)
	return n, err
}

// startPass starts a pass of the accounts filter selects of a task that is
// neither running nor paused, started by by, in a transaction of
// startJobs; it returns how many accounts it queued, and the pass's
// number.
func (s *Store) startPass(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64, filter migration.AccountFilter,
	by migration.PassStarter) (accounts int, pass int32, err error) {
	if pass, err = q.PassNext(ctx, taskID); err != nil {
		return 0, 0, err
	}
	// A person's pass tries every login; the schedule's and the final
	// pass leave out those a server refused, which would feed its lock-out.
	leaveOutRefused := !by.ByPerson()
	params := queueParams(taskID, pass, filter)
	params.LeaveOutRefusedLogins = leaveOutRefused
	queued, err := q.AccountsQueue(ctx, params)
	if err != nil {
		return 0, 0, err
	}
	n := int(queued)
	// Those left: the accounts the task refuses for their plan, and
	// those whose login was refused.
	refused, err := q.PlansRefusedSelected(ctx, dbsqlc.PlansRefusedSelectedParams(selection(taskID, filter)))
	if err != nil {
		return 0, 0, err
	}
	var loginsRefused int64
	if leaveOutRefused {
		f := selection(taskID, filter)
		if loginsRefused, err = q.AccountsLoginRefusedSelected(ctx, dbsqlc.AccountsLoginRefusedSelectedParams{TaskID: taskID,
			ReadyStates: texts(migration.MoveQueue.From()), Ids: f.Ids, States: f.States, Search: f.Search, LoginTest: f.LoginTest}); err != nil {
			return 0, 0, err
		}
	}
	switch {
	case n == 0 && loginsRefused > 0:
		return 0, 0, migration.ErrLoginsRefused
	case n == 0 && refused > 0:
		return 0, 0, migration.ErrPlanBlocked
	}
	if err := startTaskJobs(ctx, q, taskID, migration.TaskQueued, n, filter); err != nil {
		return 0, 0, err
	}
	if err := q.PassStart(ctx, dbsqlc.PassStartParams{TaskID: taskID, Pass: pass, Accounts: int32(n), StartedBy: string(by)}); err != nil {
		return 0, 0, err
	}
	started := migration.PassStartedEvent(taskID, int(pass), int64(n), by)
	if refused > 0 {
		started.Message += migration.RefusedWords(int(refused))
	}
	if loginsRefused > 0 {
		started.Message += migration.LoginsRefusedWords(int(loginsRefused))
	}
	if err := appendEvent(ctx, q, started); err != nil {
		return 0, 0, err
	}
	return n, pass, s.admit(ctx, tx, q)
}

func queueParams(taskID int64, pass int32, filter migration.AccountFilter) dbsqlc.AccountsQueueParams {
	f := selection(taskID, filter)
	from, to := guard(migration.MoveQueue)
	return dbsqlc.AccountsQueueParams{Pass: pgtype.Int4{Int32: pass, Valid: pass != 0}, FromStates: from, ToState: to,
		TaskID: taskID, Ids: f.Ids, States: f.States, Search: f.Search, LoginTest: f.LoginTest}
}

// AccountStartAttempt queues one account of a task that is not running, and
// the task with it; the task's end state is derived from all its
// accounts. While the task runs others, the account joins their pass.
func (s *Store) AccountStartAttempt(ctx context.Context, taskID, accountID int64) error {
	queue := func(q *dbsqlc.Queries, pass int32) (string, error) {
		transition, _, err := decideAccount(ctx, q, taskID, accountID, migration.AccountTrigger{Kind: migration.TriggerRun})
		if err != nil {
			return "", err
		}
		from, to := guard(transition.Move)
		queued, err := q.AccountQueue(ctx, dbsqlc.AccountQueueParams{TaskID: taskID, ID: accountID, NewRun: true,
			Pass: pgtype.Int4{Int32: pass, Valid: pass != 0}, FromStates: from, ToState: to})
		return queued.SourceLogin, err
	}
	start := func(tx pgx.Tx, q *dbsqlc.Queries) error {
		pass, err := q.PassNext(ctx, taskID)
		if err != nil {
			return err
		}
		login, err := queue(q, pass)
		if err != nil {
			return err
		}
		if err := startTaskJobs(ctx, q, taskID, migration.TaskQueued, 1, migration.AccountFilter{}); err != nil {
			return err
		}
		if err := q.PassStart(ctx, dbsqlc.PassStartParams{TaskID: taskID, Pass: pass, Accounts: 1, StartedBy: string(migration.StartedByHand)}); err != nil {
			return err
		}
		if err := appendEvent(ctx, q, migration.AccountPassStartedEvent(taskID, accountID, int(pass), login)); err != nil {
			return err
		}
		return s.admit(ctx, tx, q)
	}
	join := func(tx pgx.Tx, q *dbsqlc.Queries) error {
		return s.joinPass(ctx, tx, q, taskID, func(pass int32) (int64, migration.Event, error) {
			login, err := queue(q, pass)
			return 1, migration.PassJoinedEvent(taskID, accountID, int(pass), 1, login), err
		})
	}
	return s.startJobs(ctx, taskID, migration.CommandRunSelection, start, join)
}

// joinPass adds the accounts queue queues to the pass under way of the
// task, says so with the event queue returns, and admits those that
// have room.
func (s *Store) joinPass(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64,
	queue func(pass int32) (int64, migration.Event, error)) error {
	pass, err := q.PassOpen(ctx, taskID)
	if err != nil {
		return err
	}
	n, event, err := queue(pass) // a pass from before passes were recorded has none: 0
	if err != nil {
		return err
	}
	if _, err := q.TaskJoinJobs(ctx, dbsqlc.TaskJoinJobsParams{ID: taskID, Jobs: int32(n)}); err != nil {
		return err // the state was checked under the lock: not ErrNoRows
	}
	if err := q.PassJoin(ctx, dbsqlc.PassJoinParams{TaskID: taskID, Accounts: int32(n)}); err != nil {
		return err
	}
	if err := appendEvent(ctx, q, event); err != nil {
		return err
	}
	return s.admit(ctx, tx, q)
}

// startJobs runs start in a transaction that holds EventsLock, the task's
// row and its endpoints, which cannot change while the task runs, when
// the domain lets command start a pass (migration.DecideTask); join runs
// instead when the selected accounts join the pass under way.
func (s *Store) startJobs(ctx context.Context, taskID int64, command migration.TaskCommand, start, join func(tx pgx.Tx, q *dbsqlc.Queries) error) error {
	if s.jobsErr != nil {
		return s.jobsErr
	}
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		return startJobsTx(ctx, tx, q, taskID, command, start, join)
	}))
}

// startJobsTx is startJobs in a transaction that holds EventsLock.
func startJobsTx(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, taskID int64, command migration.TaskCommand, start, join func(tx pgx.Tx, q *dbsqlc.Queries) error) error {
	_, transition, err := decide(ctx, q, taskID, command)
	switch {
	case err != nil:
		return err
	case transition.Wait:
		return errPassWaits
	case transition.Join:
		return join(tx, q)
	}
	if err := q.TaskEndpointsHold(ctx, taskID); err != nil {
		return err
	}
	return start(tx, q)
}

// errPassWaits tells a schedule's loop that the pass it had due waits
// until the task is free: it runs a pass, or is paused.
var errPassWaits = errors.New("the scheduled pass waits")

// startTaskJobs moves a task that is not running into state with n jobs
// to wait for, the accounts that filter selected: ErrTaskRunning when it
// is running, ErrNoAccounts when it has none, ErrNoAccountSelected when
// filter selected none of them.
func startTaskJobs(ctx context.Context, q *dbsqlc.Queries, taskID int64, state migration.TaskState, n int, filter migration.AccountFilter) error {
	switch {
	case n == 0 && filter.IsZero():
		return migration.ErrNoAccounts // the task exists: startJobs locked it
	case n == 0:
		return migration.ErrNoAccountSelected
	}
	// The state is checked again here: a start that waited for the lock
	// of another may find the task running now.
	_, err := q.TaskStartJobs(ctx, dbsqlc.TaskStartJobsParams{
		ID: taskID, State: string(state), Jobs: int32(n), RunningStates: runningStates(),
	})
	if err == pgx.ErrNoRows {
		return migration.ErrTaskRunning
	}
	return err
}

// RecordAccountTest stores a test's outcome on the account, appends its
// events, counts it in the task and queues the next test, in one
// transaction; the task's last test returns it to the state it had
// before. The outcome of a test canceled or replaced meanwhile is dropped.
func (s *Store) RecordAccountTest(ctx context.Context, outcome migration.AccountTestOutcome) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		return s.recordTest(ctx, tx, q, outcome)
	}))
}

// recordTest stores a test's outcome in a transaction that holds
// EventsLock.
func (s *Store) recordTest(ctx context.Context, tx pgx.Tx, q *dbsqlc.Queries, outcome migration.AccountTestOutcome) error {
	ended, err := q.AccountTestEnd(ctx, dbsqlc.AccountTestEndParams{
		TaskID: outcome.TaskID, ID: outcome.AccountID, TestGeneration: outcome.Generation,
	})
	if err != nil || ended == 0 {
		return err
	}
	if !outcome.Canceled {
		if err := storeTestResult(ctx, q, outcome); err != nil {
			return err
		}
		if err := s.queueTests(ctx, tx, q, outcome.TaskID, 1); err != nil {
			return err
		}
	}
	_, err = finishTestJobs(ctx, q, outcome.TaskID, 1)
	return err
}

// storeTestResult keeps a finished test's result on the account, logs its
// events and counts it in the task.
func storeTestResult(ctx context.Context, q *dbsqlc.Queries, outcome migration.AccountTestOutcome) error {
	err := q.AccountTestRecord(ctx, dbsqlc.AccountTestRecordParams{
		TaskID: outcome.TaskID, ID: outcome.AccountID,
		SourceOk: boolValue(outcome.SourceError == ""), SourceError: outcome.SourceError,
		DestinationOk: boolValue(outcome.DestinationError == ""), DestinationError: outcome.DestinationError,
		SourceCounted: outcome.SourceCounted, SourceMessages: outcome.SourceMessages, SourceBytes: outcome.SourceBytes,
		LoginRefused: outcome.LoginRefused,
	})
	if err != nil {
		return err
	}
	for _, e := range outcome.Events {
		if err := appendEvent(ctx, q, e); err != nil {
			return err
		}
	}
	return q.TaskTestCounted(ctx, dbsqlc.TaskTestCountedParams{
		ID: outcome.TaskID, Failed: outcome.SourceError != "" || outcome.DestinationError != "",
		SourceMs: outcome.SourceTook.Milliseconds(), DestinationMs: outcome.DestinationTook.Milliseconds(),
	})
}

// finishTestJobs counts n of the task's test jobs done, and returns how
// many remain; after the last of a canceled test, an event says how far
// it got. A test alongside a pass counts in tests_pending, and leaves the
// task's state alone.
func finishTestJobs(ctx context.Context, q *dbsqlc.Queries, taskID int64, n int) (int, error) {
	remaining, err := q.TaskTestsAlongsideEnded(ctx, dbsqlc.TaskTestsAlongsideEndedParams{ID: taskID, Jobs: int32(n)})
	if err == nil {
		return int(remaining), nil
	}
	if err != pgx.ErrNoRows {
		return 0, err
	}
	task, err := q.TaskJobsEnded(ctx, dbsqlc.TaskJobsEndedParams{ID: taskID, Jobs: int32(n), Test: true})
	if err != nil || task.PendingJobs > 0 || task.PreviousState != string(migration.TaskCanceling) {
		return int(max(task.PendingJobs, 0)), err
	}
	return 0, appendEvent(ctx, q, migration.TestCanceledEvent(taskID, int64(task.TestsTotal), int64(task.TestsDone), int64(task.TestsFailed)))
}

// EventList returns a page of a task's events after afterSeq, or of every
// task's for taskID 0.
func (s *Store) EventList(ctx context.Context, taskID, afterSeq int64, limit int) ([]migration.Event, error) {
	var rows []dbsqlc.Event
	var err error
	if taskID == 0 {
		rows, err = s.queries.EventListAll(ctx, dbsqlc.EventListAllParams{AfterSeq: afterSeq, MaxRows: int32(limit)})
	} else {
		rows, err = s.queries.EventListByTask(ctx, dbsqlc.EventListByTaskParams{
			TaskID: int8Value(taskID), AfterSeq: afterSeq, MaxRows: int32(limit),
		})
	}
	if err != nil {
		return nil, interpretError(err)
	}
	if len(rows) == 0 && taskID != 0 {
		if _, err := s.TaskState(ctx, taskID); err != nil {
			return nil, err
		}
	}
	return eventsOf(rows)
}

// eventsOf turns stored events into the domain's.
func eventsOf(rows []dbsqlc.Event) ([]migration.Event, error) {
	events := make([]migration.Event, len(rows))
	for i, row := range rows {
		events[i] = migration.Event{
			Seq: row.Seq, Time: row.Time.Time, Kind: migration.EventKind(row.Kind),
			TaskID: row.TaskID.Int64, AccountID: row.AccountID.Int64, Side: row.Side,
			Login: row.Login, Host: row.Host, Port: int(row.Port), Error: row.Error, Message: row.Message,
			Folder: row.Folder,
		}
		if row.Progress != nil {
			var p migration.Progress
			if err := json.Unmarshal(row.Progress, &p); err != nil {
				return nil, fmt.Errorf("event %d: progress: %w", row.Seq, err)
			}
			events[i].Progress = &p
		}
	}
	return events, nil
}

// EventLatestSeq returns the seq of the newest event, 0 with none.
func (s *Store) EventLatestSeq(ctx context.Context) (int64, error) {
	seq, err := s.queries.EventLatestSeq(ctx)
	return seq, interpretError(err)
}

// appendEvent adds an event in a transaction that took EventsLock first,
// and wakes the live streams when it commits.
func appendEvent(ctx context.Context, q *dbsqlc.Queries, e migration.Event) error {
	return appendEvents(ctx, q, []migration.Event{e})
}

// appendEvents adds events, in order, in one statement, in a transaction
// that took EventsLock first, and wakes the live streams when it commits.
func appendEvents(ctx context.Context, q *dbsqlc.Queries, events []migration.Event) error {
	if len(events) == 0 {
		return nil
	}
	var arg dbsqlc.EventAppendParams
	for _, e := range events {
		var progress []byte
		if e.Progress != nil {
			progress, _ = json.Marshal(*e.Progress) // plain integers: cannot fail
		}
		arg.Kinds = append(arg.Kinds, string(e.Kind))
		arg.TaskIds = append(arg.TaskIds, e.TaskID)
		arg.AccountIds = append(arg.AccountIds, e.AccountID)
		arg.Sides = append(arg.Sides, e.Side)
		arg.Logins = append(arg.Logins, e.Login)
		arg.Hosts = append(arg.Hosts, e.Host)
		arg.Ports = append(arg.Ports, int32(e.Port))
		arg.Errors = append(arg.Errors, e.Error)
		arg.Messages = append(arg.Messages, e.Message)
		arg.Folders = append(arg.Folders, e.Folder)
		arg.Progress = append(arg.Progress, string(progress))
	}
	appended, err := q.EventAppend(ctx, arg)
	if err != nil {
		return err
	}
	return createWebhookDeliveries(ctx, q, events, appended)
}

// EventAppend adds one event on its own.
func (s *Store) EventAppend(ctx context.Context, e migration.Event) error {
	return interpretError(s.inEventsTx(ctx, func(tx pgx.Tx, q *dbsqlc.Queries) error {
		return appendEvent(ctx, q, e)
	}))
}

func boolValue(b bool) pgtype.Bool { return pgtype.Bool{Bool: b, Valid: true} }

// int8Value maps 0, which no row has as id, to NULL.
func int8Value(id int64) pgtype.Int8 { return pgtype.Int8{Int64: id, Valid: id != 0} }
