package migration

import (
	"context"
	"time"
)

// Pass is a task's pass (of every account, some, or one): the first
// copy, the re-runs before cut-over, the delta on cut-over day each keep
// their own figures (docs/design.md#passes).
type Pass struct {
	Number    int
	StartedBy PassStarter
	Accounts  int // queued when it started
	StartedAt time.Time
	EndedAt   *time.Time // nil while it runs
	State     TaskState  // its end state; "" while it runs
	Figures   PassFigures
}

// PassFigures are what a pass did, from its accounts: live while it runs,
// kept when it ends.
type PassFigures struct {
	Completed, CompletedWithErrors, Failed, Canceled int // accounts
	Totals
}

// PassStore keeps passes: a pass's start opens its record, its end closes it.
type PassStore interface {
	// TaskPasses returns a task's passes, first first; ErrNotFound for a
	// missing task.
	TaskPasses(ctx context.Context, taskID int64) ([]Pass, error)
}

// Passes returns a task's passes, first first.
func (s *Service) Passes(ctx context.Context, taskID int64) ([]Pass, error) {
	return s.store.TaskPasses(ctx, taskID)
}

// AccountPass is what one pass did for one account: its attempt's end state
// and figures (the last attempt's, if the account ran twice in the pass).
type AccountPass struct {
	Pass       int
	State      AccountState
	StartedAt  *time.Time
	FinishedAt time.Time
	Figures    Progress // the messages and bytes; no folders
	LastError  string
}

// FolderRecord is what the copy engine keeps of one source folder of an
// account, as its last attempt left it.
type FolderRecord struct {
	Source, Destination string
	// SourceMessages and DestinationMessages are both folders' counts when
	// the last attempt finished the folder (0 if none did); Verified counts
	// the source messages found on the destination.
	SourceMessages, DestinationMessages, Verified int64
	SourceBytes                                   int64     // the source folder's size when the last attempt counted it
	Complete                                      bool      // nothing was left to copy
	Refusals                                      []Refusal // messages refused or unreadable at the last attempt
	DroppedKeywords                               []string  // keywords the destination folder cannot keep
	// Altered counts the copies read back unlike their source message,
	// and AlteredExamples names the first few (FolderEnd.Altered).
	Altered         int64
	AlteredExamples []AlteredCopy
}

// AccountRecordStore reads an account's records: its passes, its folders
// and its events.
type AccountRecordStore interface {
	AccountPasses(ctx context.Context, taskID, accountID int64) ([]AccountPass, error)
	// TaskAccountPasses returns every account's passes of a task, by
	// account id.
	TaskAccountPasses(ctx context.Context, taskID int64) (map[int64][]AccountPass, error)
	AccountFolders(ctx context.Context, accountID int64) ([]FolderRecord, error)
	// TaskAlteredCopies counts, by account, the copies its folders hold
	// unlike their source message (FolderRecord.Altered).
	TaskAlteredCopies(ctx context.Context, taskID int64) (map[int64]int64, error)
	AccountEvents(ctx context.Context, taskID, accountID, afterSeq int64, limit int) ([]Event, error)
}

// AccountPasses returns what each pass did for an account, first first.
func (s *Service) AccountPasses(ctx context.Context, taskID, accountID int64) ([]AccountPass, error) {
	if _, err := s.store.AccountGet(ctx, taskID, accountID); err != nil {
		return nil, err
	}
	return s.store.AccountPasses(ctx, taskID, accountID)
}

// AccountFolders returns an account's source folders as its last attempt left
// them, in name order.
func (s *Service) AccountFolders(ctx context.Context, taskID, accountID int64) ([]FolderRecord, error) {
	if _, err := s.store.AccountGet(ctx, taskID, accountID); err != nil {
		return nil, err
	}
	return s.store.AccountFolders(ctx, accountID)
}

// AccountEvents returns a page of one account's events after afterSeq.
func (s *Service) AccountEvents(ctx context.Context, taskID, accountID, afterSeq int64, limit int) ([]Event, error) {
	limit, err := eventPage(afterSeq, limit)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.AccountGet(ctx, taskID, accountID); err != nil {
		return nil, err
	}
	return s.store.AccountEvents(ctx, taskID, accountID, afterSeq, limit)
}
