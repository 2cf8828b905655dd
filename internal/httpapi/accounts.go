package httpapi

import (
	"context"
	"io"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// ListAccounts answers GET /tasks/{id}/accounts.
func (s *Server) ListAccounts(ctx context.Context, req api.ListAccountsRequestObject) (api.ListAccountsResponseObject, error) {
	var page migration.AccountPage
	if req.Params.After != nil {
		page.AfterID = *req.Params.After
	}
	if req.Params.Limit != nil {
		if *req.Params.Limit < 1 {
			return nil, &migration.InvalidError{Field: "limit", Reason: "must be 1 or more"}
		}
		page.Limit = *req.Params.Limit
	}
	accounts, err := s.service.Accounts(ctx, req.Id, page)
	if err != nil {
		return nil, err
	}
	out := make(api.ListAccounts200JSONResponse, len(accounts))
	for i, a := range accounts {
		out[i] = accountToAPI(a)
	}
	return out, nil
}

// CreateAccount answers POST /tasks/{id}/accounts.
func (s *Server) CreateAccount(ctx context.Context, req api.CreateAccountRequestObject) (api.CreateAccountResponseObject, error) {
	id, err := s.service.CreateAccount(ctx, req.Id, accountInputFromAPI(req.Body))
	if err != nil {
		return nil, err
	}
	return api.CreateAccount201JSONResponse{Id: id}, nil
}

// ImportAccounts answers POST /tasks/{id}/accounts/import.
func (s *Server) ImportAccounts(ctx context.Context, req api.ImportAccountsRequestObject) (api.ImportAccountsResponseObject, error) {
	data, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	created, err := s.service.ImportAccounts(ctx, req.Id, data)
	if err != nil {
		return nil, err
	}
	return api.ImportAccounts201JSONResponse{Created: created}, nil
}

// GetAccount answers GET /tasks/{id}/accounts/{accountId}.
func (s *Server) GetAccount(ctx context.Context, req api.GetAccountRequestObject) (api.GetAccountResponseObject, error) {
	a, err := s.service.Account(ctx, req.Id, req.AccountId)
	if err != nil {
		return nil, err
	}
	return api.GetAccount200JSONResponse(accountToAPI(a)), nil
}

// UpdateAccount answers PUT /tasks/{id}/accounts/{accountId}.
func (s *Server) UpdateAccount(ctx context.Context, req api.UpdateAccountRequestObject) (api.UpdateAccountResponseObject, error) {
	if err := s.service.UpdateAccount(ctx, req.Id, req.AccountId, accountInputFromAPI(req.Body)); err != nil {
		return nil, err
	}
	return api.UpdateAccount204Response{}, nil
}

// DeleteAccount answers DELETE /tasks/{id}/accounts/{accountId}.
func (s *Server) DeleteAccount(ctx context.Context, req api.DeleteAccountRequestObject) (api.DeleteAccountResponseObject, error) {
	if err := s.service.DeleteAccount(ctx, req.Id, req.AccountId); err != nil {
		return nil, err
	}
	return api.DeleteAccount204Response{}, nil
}

func accountInputFromAPI(in *api.AccountInput) migration.AccountInput {
	return migration.AccountInput{
		SourceLogin:         in.SourceLogin,
		SourcePassword:      migration.Password(in.SourcePassword),
		DestinationLogin:    in.DestinationLogin,
		DestinationPassword: migration.Password(in.DestinationPassword),
	}
}

func accountToAPI(a migration.Account) api.Account {
	p := a.Progress
	return api.Account{
		Id:               a.ID,
		TaskId:           a.TaskID,
		SourceLogin:      a.SourceLogin,
		DestinationLogin: a.DestinationLogin,
		State:            api.AccountState(a.State),
		SourceTest:       testResultToAPI(a.SourceTest),
		DestinationTest:  testResultToAPI(a.DestinationTest),
		Progress: api.Progress{
			FoldersTotal:    p.FoldersTotal,
			FoldersDone:     p.FoldersDone,
			MessagesTotal:   p.MessagesTotal,
			MessagesCopied:  p.MessagesCopied,
			MessagesSkipped: p.MessagesSkipped,
			MessagesFailed:  p.MessagesFailed,
			BytesCopied:     p.BytesCopied,
		},
		LastError:  a.LastError,
		CreatedAt:  a.CreatedAt,
		UpdatedAt:  a.UpdatedAt,
		StartedAt:  a.StartedAt,
		FinishedAt: a.FinishedAt,
	}
}

func testResultToAPI(t *migration.TestResult) *api.TestResult {
	if t == nil {
		return nil
	}
	return &api.TestResult{Ok: t.OK, Error: t.Error, TestedAt: t.TestedAt}
}
