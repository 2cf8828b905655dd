package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// AuditRecord appends requests to the audit trail, in their order, in
// one statement.
func (s *Store) AuditRecord(ctx context.Context, entries ...migration.AuditEntry) error {
	var p dbsqlc.AuditRecordParams
	for _, e := range entries {
		p.At = append(p.At, pgtype.Timestamptz{Time: e.At, Valid: true})
		p.Actor = append(p.Actor, e.Actor)
		p.Remote = append(p.Remote, e.Remote)
		p.Method = append(p.Method, e.Method)
		p.Route = append(p.Route, e.Route)
		p.What = append(p.What, e.What)
		p.Path = append(p.Path, e.Path)
		p.Status = append(p.Status, int32(e.Status))
		p.RequestID = append(p.RequestID, e.RequestID)
	}
	return interpretError(s.queries.AuditRecord(ctx, p))
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
