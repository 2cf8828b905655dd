package httpapi

import (
	"context"

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
	var after int64
	var limit int
	if req.Params.After != nil {
		after = *req.Params.After
	}
	if req.Params.Limit != nil {
		if limit = *req.Params.Limit; limit < 1 {
			return nil, &migration.InvalidError{Field: "limit", Reason: "must be between 1 and 1000"}
		}
	}
	if req.Id <= 0 {
		return nil, migration.ErrNotFound // task 0 would mean every task's events
	}
	events, err := s.service.Events(ctx, req.Id, after, limit)
	if err != nil {
		return nil, err
	}
	out := make(api.ListTaskEvents200JSONResponse, len(events))
	for i, e := range events {
		out[i] = eventToAPI(e)
	}
	return out, nil
}

// RunTask answers POST /tasks/{id}/run.
func (s *Server) RunTask(ctx context.Context, req api.RunTaskRequestObject) (api.RunTaskResponseObject, error) {
	n, err := s.service.RunTask(ctx, req.Id, accountFilterFromAPI(req.Body))
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
