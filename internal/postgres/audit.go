package postgres

import (
	"context"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// AuditRecord appends a request to the audit trail.
func (s *Store) AuditRecord(ctx context.Context, e migration.AuditEntry) error {
	return interpretError(s.queries.AuditRecord(ctx, dbsqlc.AuditRecordParams{
		Actor: e.Actor, Remote: e.Remote, Method: e.Method, Route: e.Route, What: e.What, Path: e.Path,
		Status: int32(e.Status), RequestID: e.RequestID}))
}

// AuditList returns up to limit entries of the trail, newest first,
// before the entry beforeID (0: from the newest).
func (s *Store) AuditList(ctx context.Context, beforeID int64, limit int) ([]migration.AuditEntry, error) {
	rows, err := s.queries.AuditList(ctx, dbsqlc.AuditListParams{BeforeID: beforeID, MaxRows: int32(limit)})
	if err != nil {
		return nil, interpretError(err)
	}
	entries := make([]migration.AuditEntry, len(rows))
	for i, r := range rows {
		entries[i] = migration.AuditEntry{ID: r.ID, At: r.At.Time, Actor: r.Actor, Remote: r.Remote, Method: r.Method,
			Route: r.Route, What: r.What, Path: r.Path, Status: int(r.Status), RequestID: r.RequestID}
	}
	return entries, nil
}

// AuditPrune deletes the trail's entries older than keep.
func (s *Store) AuditPrune(ctx context.Context, keep time.Duration) (int64, error) {
	n, err := s.queries.AuditPrune(ctx, keep.Seconds())
	return n, interpretError(err)
}
