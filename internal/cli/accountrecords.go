package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// accountsRuns lists what each pass did for one account.
func accountsRuns(ctx context.Context, s *session, args []string) error {
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	resp, err := s.client.ListAccountRunsWithResponse(ctx, taskID, id)
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

// accountsFolders lists one account's source folders as its last run left
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

// accountsAuthorize gets an account its refresh token for a side with the
// device authorization grant: it prints the provider's page and the code
// to enter there, then waits until the service has stored the token.
func accountsAuthorize(ctx context.Context, s *session, args []string) error {
	var side string
	s.flags.StringVar(&side, "side", "", "source or destination: the side whose endpoint takes refresh tokens (required)")
	poll := s.flags.Duration("poll", 2*time.Second, "how often to look whether the user has signed in")
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	if side != "source" && side != "destination" {
		return s.usageErrorf("want --side source or --side destination")
	}
	// Only what comes after the start tells how this flow ended.
	after, err := lastAccountEventSeq(ctx, s, taskID, id)
	if err != nil {
		return err
	}
	resp, err := s.client.AuthorizeAccountWithResponse(ctx, taskID, id, api.AuthorizationInput{Side: api.AuthorizationInputSide(side)})
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	da := *resp.JSON200
	page := da.VerificationUri
	if da.VerificationUriComplete != "" {
		page = da.VerificationUriComplete
	}
	fmt.Fprintf(s.sys.Stdout, "Open %s, enter the code %s and sign in as the account's user, before %s.\n",
		page, da.UserCode, da.ExpiresAt.Local().Format(time.TimeOnly))
	for {
		if !sleep(ctx, *poll) {
			return ctx.Err()
		}
		if time.Now().After(da.ExpiresAt) {
			return &unfinishedError{reason: "the code expired before anyone signed in; start again"}
		}
		events, err := accountEventPage(ctx, s, taskID, id, after)
		if err != nil {
			return err
		}
		for _, e := range events {
			after = e.Seq
			switch {
			case e.Side != side:
			case e.Kind == api.EventKindAccountAuthorized:
				_, err := fmt.Fprintf(s.sys.Stdout, "The %s refresh token is stored.\n", side)
				return err
			case e.Kind == api.EventKindError:
				return &unfinishedError{reason: e.Message + ": " + e.Error}
			}
		}
	}
}

// lastAccountEventSeq is the seq of the account's newest event, 0 without
// any.
func lastAccountEventSeq(ctx context.Context, s *session, taskID, id int64) (int64, error) {
	var after int64
	for {
		events, err := accountEventPage(ctx, s, taskID, id, after)
		if err != nil || len(events) == 0 {
			return after, err
		}
		after = events[len(events)-1].Seq
		if len(events) < eventPageSize { // a short page is the last
			return after, nil
		}
	}
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
