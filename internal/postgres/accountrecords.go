package postgres

import (
	"context"
	"fmt"
	"sort"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// AccountPasses returns what each pass did for an account, first first.
func (s *Store) AccountPasses(ctx context.Context, taskID, accountID int64) ([]migration.AccountPass, error) {
	rows, err := s.queries.AccountPassList(ctx, dbsqlc.AccountPassListParams{TaskID: taskID, AccountID: accountID})
	if err != nil {
		return nil, interpretError(err)
	}
	passes := make([]migration.AccountPass, len(rows))
	for i, r := range rows {
		passes[i] = accountPassOf(r)
	}
	return passes, nil
}

// TaskAccountPasses returns every account's passes of a task, by account.
func (s *Store) TaskAccountPasses(ctx context.Context, taskID int64) (map[int64][]migration.AccountPass, error) {
	rows, err := s.queries.AccountPassesByTask(ctx, taskID)
	if err != nil {
		return nil, interpretError(err)
	}
	byAccount := map[int64][]migration.AccountPass{}
	for _, r := range rows {
		byAccount[r.AccountID] = append(byAccount[r.AccountID], accountPassOf(r))
	}
	return byAccount, nil
}

func accountPassOf(r dbsqlc.AccountPass) migration.AccountPass {
	return migration.AccountPass{Pass: int(r.Pass), State: migration.AccountState(r.State),
		StartedAt: timePtr(r.StartedAt), FinishedAt: r.FinishedAt.Time, LastError: r.LastError,
		Figures: migration.Progress{MessagesCopied: r.MessagesCopied, MessagesSkipped: r.MessagesSkipped,
			MessagesFailed: r.MessagesFailed, BytesCopied: r.BytesCopied,
			SourceCounted: r.SourceMessages.Valid, SourceMessages: r.SourceMessages.Int64, SourceBytes: r.SourceBytes.Int64}}
}

// TaskAlteredCopies counts, by account, the copies its folders hold
// unlike their source message; accounts without any are not in the map.
func (s *Store) TaskAlteredCopies(ctx context.Context, taskID int64) (map[int64]int64, error) {
	rows, err := s.queries.TaskAlteredCopies(ctx, taskID)
	if err != nil {
		return nil, interpretError(err)
	}
	altered := make(map[int64]int64, len(rows))
	for _, r := range rows {
		altered[r.AccountID] = r.Altered
	}
	return altered, nil
}

// AccountFolders returns the account's source folders as the copy
// engine's sync state has them, in name order.
func (s *Store) AccountFolders(ctx context.Context, accountID int64) ([]migration.FolderRecord, error) {
	states, err := s.SyncState(accountID).FolderStates(ctx)
	if err != nil {
		return nil, fmt.Errorf("account %d: sync state: %w", accountID, err)
	}
	folders := make([]migration.FolderRecord, 0, len(states))
	for name, st := range states {
		f := migration.FolderRecord{Source: name, Destination: st.Destination,
			SourceMessages: int64(st.SourceMessages), DestinationMessages: int64(st.DestMessages),
			Verified: int64(st.Covered), SourceBytes: st.SourceBytes, Complete: st.Complete, DroppedKeywords: st.DroppedKeywords}
		for _, r := range st.Failures {
			f.Refusals = append(f.Refusals, migration.Refusal{UID: r.UID, Side: r.Side, Reason: r.Reason, Subject: r.Subject, Date: r.Date, Size: r.Size})
		}
		f.Altered = int64(st.Altered)
		for _, a := range st.AlteredExamples {
			f.AlteredExamples = append(f.AlteredExamples, migration.AlteredCopy{SourceUID: a.SourceUID, DestinationUID: a.DestinationUID, Subject: a.Subject, What: a.What})
		}
		folders = append(folders, f)
	}
	sort.Slice(folders, func(i, j int) bool { return folders[i].Source < folders[j].Source })
	return folders, nil
}

// AccountEvents returns a page of one account's events after afterSeq.
func (s *Store) AccountEvents(ctx context.Context, taskID, accountID, afterSeq int64, limit int) ([]migration.Event, error) {
	rows, err := s.queries.EventListByAccount(ctx, dbsqlc.EventListByAccountParams{
		TaskID: int8Value(taskID), AccountID: int8Value(accountID), AfterSeq: afterSeq, MaxRows: int32(limit)})
	if err != nil {
		return nil, interpretError(err)
	}
	return eventsOf(rows)
}
