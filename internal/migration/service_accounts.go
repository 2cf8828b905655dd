package migration

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// CreateAccount adds one account to a task that is not running, or runs
// a migration (the account is not in it).
func (s *Service) CreateAccount(ctx context.Context, taskID int64, in AccountInput) (int64, error) {
	needs, err := s.store.TaskSecretNeeds(ctx, taskID)
	if err != nil {
		return 0, err
	}
	if err := in.normalizeNew(needs); err != nil {
		return 0, err
	}
	ids, err := s.store.AccountsAdd(ctx, taskID, []AccountInput{in})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// ImportAccounts adds every account of a CSV file (ParseAccountsCSV) to a
// task that is not running or runs a migration, or none of them, and says
// how many it added.
// A refusal lists every bad row: those the file gets wrong, and those whose
// source login the task has already.
func (s *Service) ImportAccounts(ctx context.Context, taskID int64, data []byte) (int, error) {
	// A missing or running task is the answer, whatever the file holds.
	state, err := s.store.TaskState(ctx, taskID)
	if err != nil {
		return 0, err
	}
	// Decided again under the task's lock when the rows go in; an import
	// is refused by its state alone.
	if _, err := DecideTask(TaskFacts{State: state}, CommandImport); err != nil {
		return 0, err
	}
	needs, err := s.store.TaskSecretNeeds(ctx, taskID)
	if err != nil {
		return 0, err
	}
	file := ParseAccountsCSV(data, needs)
	if len(file.Rows) == 0 && len(file.Problems) == 0 {
		return 0, invalid("file", "has no accounts")
	}
	inputs := make([]AccountInput, len(file.Rows))
	logins := make([]string, len(file.Rows))
	for i, row := range file.Rows {
		inputs[i], logins[i] = row.Account, row.Account.SourceLogin
	}
	taken, err := s.store.AccountLoginsTaken(ctx, taskID, logins)
	if err != nil {
		return 0, err
	}
	if problems := append(file.Problems, takenLines(file.Rows, taken)...); len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
		return 0, &ImportError{Lines: problems}
	}
	ids, err := s.store.AccountsAdd(ctx, taskID, inputs)
	var dup *DuplicateLoginError
	if errors.As(err, &dup) && len(dup.Logins) > 0 { // added meanwhile
		return 0, &ImportError{Lines: takenLines(file.Rows, dup.Logins)}
	}
	return len(ids), err
}

// takenLines names the rows whose source login the task has already.
func takenLines(rows []ImportRow, logins []string) []LineError {
	if len(logins) == 0 {
		return nil
	}
	taken := make(map[string]bool, len(logins))
	for _, login := range logins {
		taken[login] = true
	}
	var lines []LineError
	for _, row := range rows {
		if taken[row.Account.SourceLogin] {
			lines = append(lines, LineError{
				Line:   row.Line,
				Reason: fmt.Sprintf("source_login %q is already in this task", row.Account.SourceLogin),
			})
		}
	}
	return lines
}

// Account returns one account of a task.
func (s *Service) Account(ctx context.Context, taskID, id int64) (Account, error) {
	return s.store.AccountGet(ctx, taskID, id)
}

// Accounts lists a page of a task's accounts.
func (s *Service) Accounts(ctx context.Context, taskID int64, q AccountQuery) (AccountsPage, error) {
	if err := q.normalize(); err != nil {
		return AccountsPage{}, err
	}
	return s.store.AccountList(ctx, taskID, q)
}

// UpdateAccount replaces the logins of an account, and its secrets where
// given, while its task is not running.
func (s *Service) UpdateAccount(ctx context.Context, taskID, id int64, in AccountInput) error {
	needs, err := s.store.TaskSecretNeeds(ctx, taskID)
	if err != nil {
		return err
	}
	if err := in.normalize(needs); err != nil {
		return err
	}
	return s.store.AccountUpdate(ctx, taskID, id, in)
}

// DeleteAccount deletes one account while its task is not running.
func (s *Service) DeleteAccount(ctx context.Context, taskID, id int64) error {
	return s.store.AccountDelete(ctx, taskID, id)
}

// DeleteAccounts deletes the accounts of a task that is not running that
// filter selects, and returns how many. The filter must say something:
// deleting every account is deleting the task.
func (s *Service) DeleteAccounts(ctx context.Context, taskID int64, filter AccountFilter) (int, error) {
	if filter.IsZero() {
		return 0, invalid("selection", "must name ids, state, q or login_test: to delete every account, delete the task")
	}
	if err := filter.normalize(); err != nil {
		return 0, err
	}
	return s.store.AccountsDelete(ctx, taskID, filter)
}
