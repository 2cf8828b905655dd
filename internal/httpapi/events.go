package httpapi

import (
	"context"
	"fmt"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestTask answers POST /tasks/{id}/test.
func (s *Server) TestTask(ctx context.Context, req api.TestTaskRequestObject) (api.TestTaskResponseObject, error) {
	n, err := s.service.TestTask(ctx, req.Id, accountFilterFromAPI(req.Body))
	if err != nil {
		return nil, err
	}
	return api.TestTask202JSONResponse{Accounts: n}, nil
}

// ListTaskEvents answers GET /tasks/{id}/events.
func (s *Server) ListTaskEvents(ctx context.Context, req api.ListTaskEventsRequestObject) (api.ListTaskEventsResponseObject, error) {
	after, limit, err := eventPageOf(req.Params.After, req.Params.Limit)
	if err != nil {
		return nil, err
	}
	if req.Id <= 0 {
		return nil, migration.ErrNotFound // task 0 would mean every task's events
	}
	events, err := s.service.Events(ctx, req.Id, after, limit)
	if err != nil {
		return nil, err
	}
	return api.ListTaskEvents200JSONResponse(eventsToAPI(events)), nil
}

// eventPageOf reads the after and limit of a page of events; a limit of 0
// is refused here, since the service takes 0 for its default.
func eventPageOf(after *int64, limit *int) (int64, int, error) {
	var a int64
	var l int
	if after != nil {
		a = *after
	}
	if limit != nil {
		if l = *limit; l < 1 {
			return 0, 0, &migration.InvalidError{Field: "limit", Reason: fmt.Sprintf("must be between 1 and %d", migration.MaxEventPage)}
		}
	}
	return a, l, nil
}

func eventsToAPI(events []migration.Event) []api.Event {
	out := make([]api.Event, len(events))
	for i, e := range events {
		out[i] = eventToAPI(e)
	}
	return out
}

// RunTask answers POST /tasks/{id}/run.
func (s *Server) RunTask(ctx context.Context, req api.RunTaskRequestObject) (api.RunTaskResponseObject, error) {
	n, err := s.service.RunTask(ctx, req.Id, accountFilterFromAPI(req.Body), req.Params.Verify != nil && *req.Params.Verify)
	if err != nil {
		return nil, err
	}
	return api.RunTask202JSONResponse{Accounts: n}, nil
}

// RunAccount answers POST /tasks/{id}/accounts/{accountId}/run.
func (s *Server) RunAccount(ctx context.Context, req api.RunAccountRequestObject) (api.RunAccountResponseObject, error) {
	if err := s.service.RunAccount(ctx, req.Id, req.AccountId); err != nil {
		return nil, err
	}
	return api.RunAccount202Response{}, nil
}

// CancelTask answers POST /tasks/{id}/cancel.
func (s *Server) CancelTask(ctx context.Context, req api.CancelTaskRequestObject) (api.CancelTaskResponseObject, error) {
	n, err := s.service.CancelTask(ctx, req.Id, accountFilterFromAPI(req.Body))
	if err != nil {
		return nil, err
	}
	return api.CancelTask202JSONResponse{Accounts: n}, nil
}

// CancelAccount answers POST /tasks/{id}/accounts/{accountId}/cancel.
func (s *Server) CancelAccount(ctx context.Context, req api.CancelAccountRequestObject) (api.CancelAccountResponseObject, error) {
	if err := s.service.CancelAccount(ctx, req.Id, req.AccountId); err != nil {
		return nil, err
	}
	return api.CancelAccount202Response{}, nil
}
