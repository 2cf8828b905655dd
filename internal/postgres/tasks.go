package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// taskOptions is how TaskOptions are kept in tasks.options (jsonb):
// patterns as their text (regexp.Regexp is a TextMarshaler), the day as
// YYYY-MM-DD, as the API writes them.
type taskOptions struct {
	IncludeFolders   []*regexp.Regexp  `json:"include_folders,omitempty"`
	ExcludeFolders   []*regexp.Regexp  `json:"exclude_folders,omitempty"`
	FolderMap        map[string]string `json:"folder_map,omitempty"`
	MaxMessageBytes  int64             `json:"max_message_bytes,omitempty"`
	Since            string            `json:"since,omitempty"`
	ParallelAccounts int               `json:"parallel_accounts,omitempty"`
	MirrorDeletions  bool              `json:"mirror_deletions,omitempty"`
	GmailLabels      string            `json:"gmail_labels,omitempty"`
	// refuse_blocked is read by AccountsQueue and PlansBlockedSelected too.
	RefuseBlocked bool   `json:"refuse_blocked,omitempty"`
	VerifyCopies  string `json:"verify_copies,omitempty"`
}

func storedTaskOptions(o migration.TaskOptions) taskOptions {
	return taskOptions{IncludeFolders: o.IncludeFolders, ExcludeFolders: o.ExcludeFolders, FolderMap: o.FolderMap,
		MaxMessageBytes: o.MaxMessageBytes, Since: migration.SinceText(o.Since),
		ParallelAccounts: o.ParallelAccounts, MirrorDeletions: o.MirrorDeletions, GmailLabels: string(o.GmailLabels),
		RefuseBlocked: o.RefuseBlocked, VerifyCopies: string(o.VerifyCopies)}
}

func (o taskOptions) domain() (migration.TaskOptions, error) {
	since, err := migration.ParseSince(o.Since)
	return migration.TaskOptions{IncludeFolders: o.IncludeFolders, ExcludeFolders: o.ExcludeFolders, FolderMap: o.FolderMap,
		MaxMessageBytes: o.MaxMessageBytes, Since: since,
		ParallelAccounts: o.ParallelAccounts, MirrorDeletions: o.MirrorDeletions, RefuseBlocked: o.RefuseBlocked,
		// Tasks from before the options have their defaults.
		GmailLabels:  cmp.Or(migration.GmailLabels(o.GmailLabels), migration.GmailFirstLabel),
		VerifyCopies: cmp.Or(migration.VerifyCopies(o.VerifyCopies), migration.VerifyHeaders)}, err
}

// TaskCreate stores a new idle task.
func (s *Store) TaskCreate(ctx context.Context, spec migration.TaskSpec) (int64, error) {
	options, err := json.Marshal(storedTaskOptions(spec.Options))
	if err != nil {
		return 0, err
	}
	id, err := s.queries.TaskCreate(ctx, dbsqlc.TaskCreateParams{
		Name:                  spec.Name,
		SourceEndpointID:      spec.SourceEndpointID,
		DestinationEndpointID: spec.DestinationEndpointID,
		Options:               options,
	})
	return id, interpretTaskError(err)
}

// TaskGet returns one task with its account figures.
func (s *Store) TaskGet(ctx context.Context, id int64) (migration.Task, error) {
	row, err := s.queries.TaskViewGet(ctx, id)
	if err != nil {
		return migration.Task{}, interpretError(err)
	}
	tasks, err := s.withAccountFigures(ctx, []dbsqlc.TaskView{row})
	if err != nil {
		return migration.Task{}, err
	}
	return tasks[0], nil
}

// TaskOptions returns a task's options alone.
func (s *Store) TaskOptions(ctx context.Context, id int64) (migration.TaskOptions, error) {
	raw, err := s.queries.TaskOptionsGet(ctx, id)
	if err != nil {
		return migration.TaskOptions{}, interpretError(err)
	}
	return s.options.decode(raw)
}

// TaskState returns a task's state.
func (s *Store) TaskState(ctx context.Context, id int64) (migration.TaskState, error) {
	state, err := s.queries.TaskStateGet(ctx, id)
	return migration.TaskState(state), interpretError(err)
}

// TaskList returns every task, in ascending id order, with account figures.
func (s *Store) TaskList(ctx context.Context) ([]migration.Task, error) {
	rows, err := s.queries.TaskList(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	return s.withAccountFigures(ctx, rows)
}

// TaskUpdate replaces the spec of a task that is not running.
func (s *Store) TaskUpdate(ctx context.Context, id int64, spec migration.TaskSpec) error {
	options, err := json.Marshal(storedTaskOptions(spec.Options))
	if err != nil {
		return err
	}
	return interpretTaskError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if _, _, err := decide(ctx, q, id, migration.CommandEdit); err != nil {
			return err
		}
		return q.TaskUpdate(ctx, dbsqlc.TaskUpdateParams{
			ID:                    id,
			Name:                  spec.Name,
			SourceEndpointID:      spec.SourceEndpointID,
			DestinationEndpointID: spec.DestinationEndpointID,
			Options:               options,
		})
	}))
}

// TaskDelete deletes a task that is not running; its accounts go with it.
func (s *Store) TaskDelete(ctx context.Context, id int64) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if _, _, err := decide(ctx, q, id, migration.CommandDelete); err != nil {
			return err
		}
		return q.TaskDelete(ctx, id)
	}))
}

// TaskSetState sets a task's state. Passes drive it; tests use it directly.
func (s *Store) TaskSetState(ctx context.Context, id int64, state migration.TaskState) error {
	n, err := s.queries.TaskStateSet(ctx, dbsqlc.TaskStateSetParams{ID: id, State: string(state)})
	if err != nil {
		return interpretError(err)
	}
	if n == 0 {
		return migration.ErrNotFound
	}
	return nil
}

// interpretTaskError names the endpoint reference that a task write broke.
func interpretTaskError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == foreignKeyViolation {
		switch pgErr.ConstraintName {
		case "tasks_source_endpoint_id_fkey":
			return &migration.InvalidError{Field: "source_endpoint_id", Reason: "names no endpoint"}
		case "tasks_destination_endpoint_id_fkey":
			return &migration.InvalidError{Field: "destination_endpoint_id", Reason: "names no endpoint"}
		}
	}
	return interpretError(err)
}

// withAccountFigures converts task rows and adds the counts and totals of
// their accounts, read in one grouped query.
func (s *Store) withAccountFigures(ctx context.Context, rows []dbsqlc.TaskView) ([]migration.Task, error) {
	ids := make([]int64, len(rows))
	tasks := make([]migration.Task, len(rows))
	byID := make(map[int64]*migration.Task, len(rows))
	for i, row := range rows {
		task, err := s.taskFromRow(row)
		if err != nil {
			return nil, err
		}
		tasks[i], ids[i] = task, row.ID
		byID[row.ID] = &tasks[i]
	}
	stats, err := s.queries.AccountStatsByTask(ctx, dbsqlc.AccountStatsByTaskParams{TaskIds: ids, LoggedInStates: texts(migration.LoggedInStates)})
	if err != nil {
		return nil, interpretError(err)
	}
	endedCounted := map[int64]bool{}
	for _, st := range stats {
		task := byID[st.TaskID]
		if !endedCounted[st.TaskID] { // the same on each of the task's rows
			endedCounted[st.TaskID] = true
			task.Totals.MessagesCopiedToDate += st.EndedMessagesCopied
			task.Totals.BytesCopiedToDate += st.EndedBytesCopied
		}
		task.Accounts.Total += st.Accounts
		task.Accounts.ByState[migration.AccountState(st.State)] += st.Accounts
		task.Totals.MessagesCopied += st.MessagesCopied
		task.Totals.BytesCopied += st.BytesCopied
		task.Totals.MessagesSkipped += st.MessagesSkipped
		task.Totals.MessagesFailed += st.MessagesFailed
		task.Totals.SourceMessages += st.SourceMessages
		task.Totals.SourceBytes += st.SourceBytes
		task.Totals.AccountsUncounted += st.Accounts - st.AccountsCounted
		task.Logins.Working += st.LoginsWorking
		task.Logins.Refused += st.LoginsRefused
		task.Logins.Untested += st.Accounts - st.LoginsWorking - st.LoginsRefused
		// An attempt under way has not ended in its pass's records yet.
		if migration.AccountState(st.State).InPass() {
			task.Totals.MessagesCopiedToDate += st.MessagesCopied
			task.Totals.BytesCopiedToDate += st.BytesCopied
		}
	}
	return tasks, nil
}

func (s *Store) taskFromRow(row dbsqlc.TaskView) (migration.Task, error) {
	options, err := s.options.decode(row.Options)
	if err != nil {
		return migration.Task{}, err
	}
	return migration.Task{
		ID: row.ID,
		TaskSpec: migration.TaskSpec{
			Name:                  row.Name,
			SourceEndpointID:      row.SourceEndpointID,
			DestinationEndpointID: row.DestinationEndpointID,
			Options:               options,
		},
		State:    migration.TaskState(row.State),
		Accounts: migration.AccountCounts{ByState: map[migration.AccountState]int64{}},
		Tests: migration.TestFigures{Total: int64(row.TestsTotal), Tested: int64(row.TestsDone), Failed: int64(row.TestsFailed),
			Running: row.TestsPending > 0, StartedAt: timePtr(row.TestsStartedAt),
			SourceLogins: time.Duration(row.TestsSourceMs) * time.Millisecond, DestinationLogins: time.Duration(row.TestsDestinationMs) * time.Millisecond},
		CreatedAt:  row.CreatedAt.Time,
		UpdatedAt:  row.UpdatedAt.Time,
		StartedAt:  timePtr(row.StartedAt),
		FinishedAt: timePtr(row.FinishedAt),
		PausedAt:   timePtr(row.PausedAt),
	}, nil
}

func runningStates() []string { return texts(migration.RunningTaskStates) }

func timePtr(t pgtype.Timestamptz) *time.Time {
	if !t.Valid {
		return nil
	}
	return &t.Time
}
