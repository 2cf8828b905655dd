package migration

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"
)

// The audit trail (docs/security.md#audit-trail): every request that
// changes something, or tried to, with who made it, from where, what it
// was and how it ended. It holds no body and no query string, which carry
// passwords and tokens.

// AuditEntry is one request of the trail.
type AuditEntry struct {
	ID int64
	At time.Time
	// Actor names whose token let the request in: "" when none did (it
	// was refused before, or the service asks for no token).
	Actor string
	// Remote is the client's address.
	Remote string
	// Method and Route say what was asked: the API route (its pattern,
	// e.g. /api/v1/tasks/{id}/run), "" when the request reached none;
	// What is the route's summary in the API's words; Path is the path
	// requested, without its query.
	Method, Route, What, Path string
	Status                    int
	RequestID                 string
}

// Outcome says how the request ended, in words: "done (201 Created)",
// "refused (409 Conflict)", "failed (500 Internal Server Error)".
func (e AuditEntry) Outcome() string {
	text := strconv.Itoa(e.Status)
	if reason := statusReasons[e.Status]; reason != "" {
		text += " " + reason
	}
	switch {
	case e.Status < 400:
		return "done (" + text + ")"
	case e.Status < 500:
		return "refused (" + text + ")"
	}
	return "failed (" + text + ")"
}

// statusReasons are the reason phrases (RFC 9110 §15) of the statuses the
// API answers a change with.
var statusReasons = map[int]string{
	200: "OK", 201: "Created", 202: "Accepted", 204: "No Content",
	400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
	409: "Conflict", 413: "Content Too Large", 415: "Unsupported Media Type", 429: "Too Many Requests",
	500: "Internal Server Error", 503: "Service Unavailable",
}

// AuditStore keeps the trail.
type AuditStore interface {
	// AuditRecord appends entries, in their order.
	AuditRecord(ctx context.Context, entries ...AuditEntry) error
	// AuditList returns up to limit entries, newest first, before the
	// entry beforeID (0: from the newest).
	AuditList(ctx context.Context, beforeID int64, limit int) ([]AuditEntry, error)
	// AuditPrune deletes the entries older than keep, and counts them.
	AuditPrune(ctx context.Context, keep time.Duration) (int64, error)
}

// MaxAuditPage caps the entries of one page of the trail.
const MaxAuditPage = 1000

// AuditLog returns a page of the trail, newest first: up to limit
// entries (MaxAuditPage when 0) before the entry beforeID (0: from the
// newest).
func (s *Service) AuditLog(ctx context.Context, beforeID int64, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > MaxAuditPage {
		limit = MaxAuditPage
	}
	return s.store.AuditList(ctx, beforeID, limit)
}

// auditColumns are the trail's CSV columns; new ones go at the end.
var auditColumns = []string{"id", "at", "actor", "remote", "method", "route", "what", "path", "status", "outcome", "request_id"}

// WriteAuditCSV writes the whole trail kept, newest first, as CSV.
func (s *Service) WriteAuditCSV(ctx context.Context, w io.Writer) error {
	out := csv.NewWriter(w)
	out.Write(auditColumns) //nolint:errcheck // Flush reports write errors
	for before := int64(0); ; {
		page, err := s.store.AuditList(ctx, before, MaxAuditPage)
		if err != nil {
			return err
		}
		for _, e := range page {
			out.Write([]string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format(time.RFC3339), spreadsheetSafe(e.Actor), e.Remote, e.Method, //nolint:errcheck // as above
				e.Route, spreadsheetSafe(e.What), spreadsheetSafe(e.Path), strconv.Itoa(e.Status), e.Outcome(), e.RequestID})
		}
		if len(page) < MaxAuditPage {
			break
		}
		before = page[len(page)-1].ID
	}
	out.Flush()
	if err := out.Error(); err != nil {
		return fmt.Errorf("writing the audit trail: %w", err)
	}
	return nil
}
