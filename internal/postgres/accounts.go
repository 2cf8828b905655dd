package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// Sides of an account, as they appear in sealing labels.
const (
	sideSource      = "source"
	sideDestination = "destination"
)

// sealDestination seals in's destination password for account id, or is
// nil (NULL: the source password) when in links it to the source's.
func (s *Store) sealDestination(in migration.AccountInput, id int64) []byte {
	if in.DestinationPasswordSameAsSource {
		return nil
	}
	return s.box.Seal([]byte(in.DestinationPassword), passwordLabel(id, sideDestination))
}

// passwordLabel binds a sealed password to its row and column.
func passwordLabel(accountID int64, side string) string {
	return fmt.Sprintf("accounts/%d/%s_password", accountID, side)
}

// AccountsAdd stores accounts in one transaction, or none: the task must
// exist and not be running, and no source login may be in the task yet.
// Rows go in with COPY, their ids taken first so that each password can be
// sealed to its row.
func (s *Store) AccountsAdd(ctx context.Context, taskID int64, accounts []migration.AccountInput) ([]int64, error) {
	var ids []int64
	err := s.inTaskTx(ctx, taskID, migration.CommandImport, func(q *dbsqlc.Queries) error {
		if err := s.refuseTakenLogins(ctx, q, taskID, accounts); err != nil {
			return err
		}
		var err error
		if ids, err = q.AccountIDsReserve(ctx, int32(len(accounts))); err != nil {
			return err
		}
		rows := make([]dbsqlc.AccountCopyFromParams, len(accounts))
		for i, in := range accounts {
			rows[i] = dbsqlc.AccountCopyFromParams{
				ID:                  ids[i],
				TaskID:              taskID,
				SourceLogin:         in.SourceLogin,
				SourcePassword:      s.box.Seal([]byte(in.SourcePassword), passwordLabel(ids[i], sideSource)),
				DestinationLogin:    in.DestinationLogin,
				DestinationPassword: s.sealDestination(in, ids[i]),
			}
		}
		_, err = q.AccountCopyFrom(ctx, rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

func (s *Store) refuseTakenLogins(ctx context.Context, q *dbsqlc.Queries, taskID int64, accounts []migration.AccountInput) error {
	logins := make([]string, len(accounts))
	for i, in := range accounts {
		logins[i] = in.SourceLogin
	}
	taken, err := loginsTaken(ctx, q, taskID, logins)
	if err != nil {
		return err
	}
	if len(taken) > 0 {
		return &migration.DuplicateLoginError{Logins: taken}
	}
	return nil
}

// AccountLoginsTaken returns those of logins that the task has already.
func (s *Store) AccountLoginsTaken(ctx context.Context, taskID int64, logins []string) ([]string, error) {
	taken, err := loginsTaken(ctx, s.queries, taskID, logins)
	return taken, interpretError(err)
}

func loginsTaken(ctx context.Context, q *dbsqlc.Queries, taskID int64, logins []string) ([]string, error) {
	return q.AccountLoginsTaken(ctx, dbsqlc.AccountLoginsTakenParams{TaskID: taskID, Logins: logins})
}

// AccountGet returns one account of a task.
func (s *Store) AccountGet(ctx context.Context, taskID, id int64) (migration.Account, error) {
	row, err := s.queries.AccountGet(ctx, dbsqlc.AccountGetParams{TaskID: taskID, ID: id})
	if err != nil {
		return migration.Account{}, interpretError(err)
	}
	return accountFromRow(row), nil
}

// AccountList returns a page of a task's accounts (see the AccountPage
// query), and how many the filters select.
func (s *Store) AccountList(ctx context.Context, taskID int64, q migration.AccountQuery) (migration.AccountsPage, error) {
	f := selection(taskID, q.AccountFilter)
	params := dbsqlc.AccountPageParams{TaskID: taskID, Ids: f.Ids, States: f.States, Search: f.Search, LoginTest: f.LoginTest,
		SortBy: string(q.Sort.By), Descending: q.Sort.Descending, StateOrder: texts(migration.AccountStatesByAttention)}
	if q.After != nil {
		params.AfterKey, params.AfterID = q.After.Key, pgtype.Int8{Int64: q.After.ID, Valid: true}
	}
	if q.Limit > 0 {
		// One more than asked says whether there is a next page.
		params.MaxRows = pgtype.Int4{Int32: int32(min(q.Limit, 1<<30-1)) + 1, Valid: true}
	}
	rows, err := s.queries.AccountPage(ctx, params)
	if err != nil {
		return migration.AccountsPage{}, interpretError(err)
	}
	total, err := s.queries.AccountCount(ctx, f)
	if err != nil {
		return migration.AccountsPage{}, interpretError(err)
	}
	if err := s.emptyOfATask(ctx, taskID, int(total)); err != nil {
		return migration.AccountsPage{}, err
	}
	page := migration.AccountsPage{Total: total}
	if q.Limit > 0 && len(rows) > q.Limit {
		rows = rows[:q.Limit]
		last := rows[len(rows)-1]
		page.Next = &migration.AccountCursor{Sort: q.Sort, Key: last.SortKey, ID: last.AccountView.ID}
	}
	page.Accounts = make([]migration.Account, len(rows))
	for i, row := range rows {
		page.Accounts[i] = accountFromRow(row.AccountView)
	}
	return page, nil
}

// selection is a filter of a task's accounts as the queries that call
// account_selected take it (their parameter structs have these fields).
func selection(taskID int64, f migration.AccountFilter) dbsqlc.AccountCountParams {
	ids := f.IDs
	if ids == nil {
		ids = []int64{} // an empty array selects any; NULL would select none
	}
	return dbsqlc.AccountCountParams{TaskID: taskID, Ids: ids, States: texts(f.States), Search: f.Search, LoginTest: string(f.LoginTest)}
}

// emptyOfATask says ErrNotFound for an empty listing (n rows) of a task
// that does not exist: a 404, not [].
func (s *Store) emptyOfATask(ctx context.Context, taskID int64, n int) error {
	if n > 0 {
		return nil
	}
	_, err := s.TaskState(ctx, taskID)
	return err
}

// texts is values as plain strings, for text[] parameters.
func texts[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// AccountUpdate replaces an account's logins, and its passwords where in
// has them, while the task is not running, or runs a migration the
// account is not in (ErrAccountRunning then).
func (s *Store) AccountUpdate(ctx context.Context, taskID, id int64, in migration.AccountInput) error {
	params := dbsqlc.AccountUpdateParams{
		TaskID:           taskID,
		ID:               id,
		SourceLogin:      in.SourceLogin,
		DestinationLogin: in.DestinationLogin,
	}
	if in.SourcePassword != "" {
		params.SourcePassword = s.box.Seal([]byte(in.SourcePassword), passwordLabel(id, sideSource))
	}
	params.LinkDestination = in.DestinationPasswordSameAsSource
	if in.DestinationPassword != "" {
		params.DestinationPassword = s.sealDestination(in, id)
	}
	err := s.inTaskTx(ctx, taskID, migration.CommandImport, func(q *dbsqlc.Queries) error {
		n, err := q.AccountUpdate(ctx, params)
		if err != nil || n > 0 {
			return err
		}
		if _, err := q.AccountGet(ctx, dbsqlc.AccountGetParams{TaskID: taskID, ID: id}); err != nil {
			return err
		}
		return migration.ErrAccountRunning
	})
	var dup *migration.DuplicateLoginError
	if errors.As(err, &dup) {
		dup.Logins = []string{in.SourceLogin}
	}
	return err
}

// AccountDelete deletes one account while its task is not running.
func (s *Store) AccountDelete(ctx context.Context, taskID, id int64) error {
	return s.inTaskTx(ctx, taskID, migration.CommandDeleteAccounts, func(q *dbsqlc.Queries) error {
		n, err := q.AccountDelete(ctx, dbsqlc.AccountDeleteParams{TaskID: taskID, ID: id})
		if err != nil {
			return err
		}
		if n == 0 {
			return migration.ErrNotFound
		}
		return nil
	})
}

// AccountsDelete deletes the accounts of a task that is not running that
// filter selects, and returns how many; ErrNoAccountSelected when it
// selects none.
func (s *Store) AccountsDelete(ctx context.Context, taskID int64, filter migration.AccountFilter) (int, error) {
	var n int64
	err := s.inTaskTx(ctx, taskID, migration.CommandDeleteAccounts, func(q *dbsqlc.Queries) error {
		var err error
		n, err = q.AccountsDeleteSelected(ctx, dbsqlc.AccountsDeleteSelectedParams(selection(taskID, filter)))
		if err == nil && n == 0 {
			return migration.ErrNoAccountSelected
		}
		return err
	})
	return int(n), err
}

// AccountCredentials returns the logins and opened passwords of an account,
// for logging in to its servers.
func (s *Store) AccountCredentials(ctx context.Context, taskID, id int64) (migration.Credentials, error) {
	row, err := s.queries.AccountCredentialsGet(ctx, dbsqlc.AccountCredentialsGetParams{TaskID: taskID, ID: id})
	if err != nil {
		return migration.Credentials{}, interpretError(err)
	}
	return s.openCredentials(id, row.SourceLogin, row.SourcePassword, row.DestinationLogin, row.DestinationPassword)
}

// openCredentials opens account id's sealed passwords; a destination
// without a password of its own takes the source's.
func (s *Store) openCredentials(id int64, sourceLogin string, sealedSource []byte, destinationLogin string, sealedDestination []byte) (migration.Credentials, error) {
	source, err := s.box.Open(sealedSource, passwordLabel(id, sideSource))
	if err != nil {
		return migration.Credentials{}, fmt.Errorf("account %d source password: %w", id, err)
	}
	creds := migration.Credentials{SourceLogin: sourceLogin, SourcePassword: migration.Password(source),
		DestinationLogin: destinationLogin, DestinationPassword: migration.Password(source)}
	if sealedDestination == nil { // linked to the source's
		return creds, nil
	}
	destination, err := s.box.Open(sealedDestination, passwordLabel(id, sideDestination))
	if err != nil {
		return migration.Credentials{}, fmt.Errorf("account %d destination password: %w", id, err)
	}
	creds.DestinationPassword = migration.Password(destination)
	return creds, nil
}

// inTaskTx runs fn in a transaction that holds the task's row (no pass
// can start or end meanwhile), when the domain lets command change the
// task's accounts (migration.DecideTask): deleting never while the task
// runs (the spec's running condition); adding and changing also while it
// runs a migration, which only the accounts it queued take part in.
func (s *Store) inTaskTx(ctx context.Context, taskID int64, command migration.TaskCommand, fn func(q *dbsqlc.Queries) error) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if _, _, err := decide(ctx, q, taskID, command); err != nil {
			return err
		}
		return fn(q)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		return &migration.DuplicateLoginError{}
	}
	return interpretError(err)
}

func accountFromRow(row dbsqlc.AccountView) migration.Account {
	return migration.Account{
		ID:               row.ID,
		TaskID:           row.TaskID,
		SourceLogin:      row.SourceLogin,
		DestinationLogin: row.DestinationLogin,
		State:            migration.AccountState(row.State),
		SourceTest:       testResult(row.SourceTestOk, row.SourceTestError, row.SourceTestedAt, row.CredentialsChangedAt),
		DestinationTest:  testResult(row.DestinationTestOk, row.DestinationTestError, row.DestinationTestedAt, row.CredentialsChangedAt),
		Progress: migration.Progress{
			FoldersTotal:    row.FoldersTotal,
			FoldersDone:     row.FoldersDone,
			MessagesTotal:   row.MessagesTotal,
			MessagesCopied:  row.MessagesCopied,
			MessagesSkipped: row.MessagesSkipped,
			MessagesFailed:  row.MessagesFailed,
			BytesCopied:     row.BytesCopied,
			SourceCounted:   row.SourceMessages.Valid,
			SourceMessages:  row.SourceMessages.Int64,
			SourceBytes:     row.SourceBytes.Int64,
		},
		LastError:   row.LastError,
		CreatedAt:   row.CreatedAt.Time,
		UpdatedAt:   row.UpdatedAt.Time,
		StartedAt:   timePtr(row.StartedAt),
		FinishedAt:  timePtr(row.FinishedAt),
		PausedUntil: timePtr(row.PausedUntil), LoginRefused: row.LoginRefused,
		Scripts: scriptsFromJSON(row.Scripts),

		DestinationLinkedToSource: row.DestinationLinkedToSource,
	}
}

// scriptsFromJSON reads what scriptsJSON stored; nil when nothing was,
// or what was cannot be read (the account page then shows none).
func scriptsFromJSON(data []byte) *migration.ScriptsEnd {
	if len(data) == 0 {
		return nil
	}
	var s migration.ScriptsEnd
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	return &s
}

func testResult(ok pgtype.Bool, errText string, at, credentialsChanged pgtype.Timestamptz) *migration.TestResult {
	if !ok.Valid {
		return nil
	}
	return &migration.TestResult{OK: ok.Bool, Error: errText, TestedAt: at.Time,
		Outdated: credentialsChanged.Valid && at.Time.Before(credentialsChanged.Time)}
}

// AccountSecretRotated stores the refresh token that the authorization
// server handed out in place of an account's on side ("source",
// "destination"), sealed like the one it replaces.
func (s *Store) AccountSecretRotated(ctx context.Context, taskID, id int64, side string, token migration.Password) error {
	sealed := s.box.Seal([]byte(token), passwordLabel(id, side))
	switch side {
	case sideSource:
		return interpretError(s.queries.AccountSourceSecretSet(ctx, dbsqlc.AccountSourceSecretSetParams{TaskID: taskID, ID: id, Secret: sealed}))
	case sideDestination:
		return interpretError(s.queries.AccountDestinationSecretSet(ctx, dbsqlc.AccountDestinationSecretSetParams{TaskID: taskID, ID: id, Secret: sealed}))
	}
	return fmt.Errorf("no side %q", side)
}
