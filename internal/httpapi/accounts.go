package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// ListAccounts answers GET /tasks/{id}/accounts.
func (s *Server) ListAccounts(ctx context.Context, req api.ListAccountsRequestObject) (api.ListAccountsResponseObject, error) {
	q, err := accountQueryFromAPI(req.Params)
	if err != nil {
		return nil, err
	}
	page, err := s.service.Accounts(ctx, req.Id, q)
	if err != nil {
		return nil, err
	}
	out := api.ListAccounts200JSONResponse{Body: make([]api.Account, len(page.Accounts)),
		Headers: api.ListAccounts200ResponseHeaders{XTotalCount: page.Total}}
	for i, a := range page.Accounts {
		out.Body[i] = accountToAPI(a)
	}
	if page.Next != nil {
		link := fmt.Sprintf(`<%s>; rel="next"`, nextAccountsURL(req.Id, q, *page.Next))
		out.Headers.Link = &link
	}
	return out, nil
}

// accountQueryFromAPI reads the listing's parameters. A cursor carries
// its sort; the older after= pages in id order only.
func accountQueryFromAPI(p api.ListAccountsParams) (migration.AccountQuery, error) {
	q := migration.AccountQuery{AccountFilter: accountFilterFromAPI(&api.AccountSelection{
		State: deref(p.State), Q: deref(p.Q), LoginTest: p.LoginTest})}
	sort, err := migration.ParseAccountSort(string(deref(p.Sort)))
	if err != nil {
		return q, err
	}
	q.Sort = sort
	if p.Cursor != nil {
		cursor, err := migration.ParseAccountCursor(*p.Cursor)
		if err != nil {
			return q, err
		}
		if p.Sort == nil {
			q.Sort = cursor.Sort
		}
		q.After = &cursor
	}
	if p.After != nil {
		if *p.After < 0 {
			return q, &migration.InvalidError{Field: "after", Reason: "must be 0 or more"}
		}
		if p.Cursor != nil || q.Sort != (migration.AccountSort{By: migration.OrderByID}) {
			return q, &migration.InvalidError{Field: "after", Reason: "pages in id order only, and not with cursor"}
		}
		if *p.After > 0 {
			q.After = &migration.AccountCursor{Sort: q.Sort, ID: *p.After}
		}
	}
	if p.Limit != nil {
		if *p.Limit < 1 {
			return q, &migration.InvalidError{Field: "limit", Reason: "must be 1 or more"}
		}
		q.Limit = *p.Limit
	}
	return q, nil
}

// nextAccountsURL is the URL of the page after q's: the same filters and
// limit, from the cursor next.
func nextAccountsURL(taskID int64, q migration.AccountQuery, next migration.AccountCursor) string {
	query := url.Values{}
	if len(q.States) > 0 {
		names := make([]string, len(q.States))
		for i, s := range q.States {
			names[i] = string(s)
		}
		query.Set("state", strings.Join(names, ","))
	}
	if q.Search != "" {
		query.Set("q", q.Search)
	}
	if q.LoginTest != "" {
		query.Set("login_test", string(q.LoginTest))
	}
	query.Set("sort", next.Sort.String())
	query.Set("cursor", next.String())
	query.Set("limit", strconv.Itoa(q.Limit))
	return fmt.Sprintf("%s/tasks/%d/accounts?%s", BasePath, taskID, query.Encode())
}

// accountFilterFromAPI is the domain's filter of a selection; nil (no
// body) selects every account.
func accountFilterFromAPI(sel *api.AccountSelection) migration.AccountFilter {
	if sel == nil {
		return migration.AccountFilter{}
	}
	f := migration.AccountFilter{IDs: sel.Ids, Search: sel.Q, LoginTest: migration.LoginTestFilter(deref(sel.LoginTest))}
	for _, state := range sel.State {
		f.States = append(f.States, migration.AccountState(state))
	}
	return f
}

// DeleteAccounts answers POST /tasks/{id}/accounts/delete.
func (s *Server) DeleteAccounts(ctx context.Context, req api.DeleteAccountsRequestObject) (api.DeleteAccountsResponseObject, error) {
	n, err := s.service.DeleteAccounts(ctx, req.Id, accountFilterFromAPI(req.Body))
	if err != nil {
		return nil, err
	}
	return api.DeleteAccounts200JSONResponse{Deleted: n}, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// CreateAccount answers POST /tasks/{id}/accounts.
func (s *Server) CreateAccount(ctx context.Context, req api.CreateAccountRequestObject) (api.CreateAccountResponseObject, error) {
	in, err := accountInputFromAPI(req.Body)
	if err != nil {
		return nil, err
	}
	id, err := s.service.CreateAccount(ctx, req.Id, in)
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
	in, err := accountInputFromAPI(req.Body)
	if err != nil {
		return nil, err
	}
	if err := s.service.UpdateAccount(ctx, req.Id, req.AccountId, in); err != nil {
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

// accountInputFromAPI is the domain's account for a request body. A
// refresh token fills the side's place of the password: one of the two.
func accountInputFromAPI(in *api.AccountInput) (migration.AccountInput, error) {
	out := migration.AccountInput{
		SourceLogin:         in.SourceLogin,
		SourcePassword:      migration.Password(in.SourcePassword),
		DestinationLogin:    in.DestinationLogin,
		DestinationPassword: migration.Password(in.DestinationPassword),

		DestinationPasswordSameAsSource: in.DestinationPasswordSameAsSource,
	}
	for _, side := range []struct {
		name            string
		password, token string
		secret          *migration.Password
	}{
		{"source", in.SourcePassword, in.SourceRefreshToken, &out.SourcePassword},
		{"destination", in.DestinationPassword, in.DestinationRefreshToken, &out.DestinationPassword},
	} {
		if side.token == "" {
			continue
		}
		if side.password != "" {
			return out, &migration.InvalidError{Field: side.name + "_refresh_token", Reason: "cannot go with " + side.name + "_password: give one of the two"}
		}
		*side.secret = migration.Password(side.token)
	}
	return out, nil
}

func accountToAPI(a migration.Account) api.Account {
	out := api.Account{
		Id:               a.ID,
		TaskId:           a.TaskID,
		SourceLogin:      a.SourceLogin,
		DestinationLogin: a.DestinationLogin,
		State:            api.AccountState(a.State),
		SourceTest:       testResultToAPI(a.SourceTest),
		DestinationTest:  testResultToAPI(a.DestinationTest),
		Progress:         a.Progress,
		LastError:        a.LastError,
		CreatedAt:        a.CreatedAt,
		UpdatedAt:        a.UpdatedAt,
		StartedAt:        a.StartedAt,
		FinishedAt:       a.FinishedAt,
		PausedUntil:      a.PausedUntil,

		DestinationPasswordSameAsSource: a.DestinationLinkedToSource,
	}
	if a.LoginRefused != "" {
		side := api.AccountLoginRefused(a.LoginRefused)
		out.LoginRefused = &side
	}
	if a.Scripts != nil {
		out.Scripts = scriptsToAPI(*a.Scripts, a.Scripts.Summary())
	}
	return out
}

// scriptsToAPI is what became of an account's Sieve scripts, or what a
// plan found would, told in summary, with empty lists rather than nulls.
func scriptsToAPI(s migration.ScriptsEnd, summary string) *api.AccountScripts {
	out := &api.AccountScripts{Copied: orEmptyList(s.Copied), Unchanged: orEmptyList(s.Unchanged), Active: s.Active,
		Renamed: []api.ScriptRename{}, Refused: []api.ScriptProblem{}, Unread: []api.ScriptProblem{}, Kept: []api.ScriptProblem{}, Error: s.Error, Summary: summary}
	for _, r := range s.Renamed {
		out.Renamed = append(out.Renamed, api.ScriptRename{Script: r.Script, From: r.From, To: r.To})
	}
	for _, r := range s.Refused {
		out.Refused = append(out.Refused, api.ScriptProblem{Script: r.Script, Reason: r.Reason})
	}
	for _, r := range s.Unread {
		out.Unread = append(out.Unread, api.ScriptProblem{Script: r.Script, Reason: r.Reason})
	}
	for _, r := range s.Kept {
		out.Kept = append(out.Kept, api.ScriptProblem{Script: r.Script, Reason: r.Reason})
	}
	return out
}

func testResultToAPI(t *migration.TestResult) *api.TestResult {
	if t == nil {
		return nil
	}
	return &api.TestResult{Ok: t.OK, Error: t.Error, TestedAt: t.TestedAt, Outdated: t.Outdated}
}
