package cli

import (
	"context"
	"net/http"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

func auditCommands() []command {
	return []command{
		{"list", "", "List the audit trail, newest first: who changed what, from where, and how it ended", auditList},
		{"export", "", "Write the whole audit trail kept as CSV", auditExport},
	}
}

// auditList prints the newest entries of the trail.
func auditList(ctx context.Context, s *session, args []string) error {
	limit := s.flags.Int("limit", 50, "at most this many entries (at most 1000)")
	before := s.flags.Int64("before", 0, "only entries older than this id (the next page)")
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	params := &api.ListAuditParams{Limit: limit}
	if *before > 0 {
		params.Before = before
	}
	resp, err := s.client.ListAuditWithResponse(ctx, params)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	entries := *resp.JSON200
	return s.printOutput(entries, func() error {
		rows := make([][]string, 0, len(entries))
		for _, e := range entries {
			actor := e.Actor
			if actor == "" {
				actor = "(no valid token)"
			}
			what := e.What
			if what == "" {
				what = e.Method + " " + e.Path
			}
			rows = append(rows, []string{itoa(e.Id), e.At.Local().Format(time.DateTime), actor, e.Remote, what, e.Path, e.Outcome})
		}
		return s.printTable([]string{"ID", "TIME", "WHO", "FROM", "WHAT", "PATH", "OUTCOME"}, rows)
	})
}

// auditExport writes the whole trail as CSV.
func auditExport(ctx context.Context, s *session, args []string) error {
	file := s.flags.String("o", "", "write the trail to this file instead of stdout")
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.GetAuditCSVWithResponse(ctx)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	return s.writeDownload(*file, resp.Body)
}
