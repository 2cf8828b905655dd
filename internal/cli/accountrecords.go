package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// accountsPasses lists what each pass did for one account.
func accountsPasses(ctx context.Context, s *session, args []string) error {
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	resp, err := s.client.ListAccountPassesWithResponse(ctx, taskID, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	runs := *resp.JSON200
	return s.printOutput(runs, func() error {
		rows := make([][]string, 0, len(runs))
		for _, r := range runs {
			took := "-"
			if r.StartedAt != nil {
				took = durationText(r.FinishedAt.Sub(*r.StartedAt))
			}
			source := "-"
			if r.SourceMessages != nil && r.SourceBytes != nil {
				source = fmt.Sprintf("%d, %s MB", *r.SourceMessages, megabytes(*r.SourceBytes))
			}
			rows = append(rows, []string{strconv.Itoa(r.Pass), string(r.State), timeOrDash(&r.FinishedAt), took,
				strconv.FormatInt(r.MessagesCopied, 10), megabytes(r.BytesCopied), fmt.Sprintf("%d/%d", r.MessagesSkipped, r.MessagesFailed),
				source, orDash(r.LastError)})
		}
		return s.printTable([]string{"PASS", "STATE", "FINISHED", "TOOK", "COPIED", "MB", "SKIPPED/FAILED", "SOURCE", "LAST ERROR"}, rows)
	})
}

// accountsFolders lists one account's source folders as its last attempt left
// them, and the messages a server refused there, with its words.
func accountsFolders(ctx context.Context, s *session, args []string) error {
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	resp, err := s.client.ListAccountFoldersWithResponse(ctx, taskID, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	folders := *resp.JSON200
	return s.printOutput(folders, func() error {
		rows := make([][]string, 0, len(folders))
		for _, f := range folders {
			verified := fmt.Sprintf("%d", f.Verified)
			if !f.Complete {
				verified += " (not finished)"
			}
			var refused []string
			for _, r := range f.Refused {
				refused = append(refused, fmt.Sprintf("UID %d: %s refused: %s", r.Uid, r.Side, r.Reason))
			}
			rows = append(rows, []string{f.Source, f.Destination, strconv.FormatInt(f.SourceMessages, 10), megabytes(f.SourceBytes),
				strconv.FormatInt(f.DestinationMessages, 10), verified, orDash(strings.Join(refused, "; "))})
		}
		return s.printTable([]string{"SOURCE FOLDER", "DESTINATION FOLDER", "SOURCE", "MB", "DESTINATION", "VERIFIED", "REFUSED"}, rows)
	})
}

// accountEventPage is a page of the account's stored events after seq
// after, oldest first.
func accountEventPage(ctx context.Context, s *session, taskID, id, after int64) ([]api.Event, error) {
	limit := eventPageSize
	resp, err := s.client.ListAccountEventsWithResponse(ctx, taskID, id, &api.ListAccountEventsParams{After: &after, Limit: &limit})
	if err := expect(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return *resp.JSON200, nil
}
