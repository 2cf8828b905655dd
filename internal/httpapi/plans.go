package httpapi

import (
	"context"
	"fmt"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// PlanTask answers POST /tasks/{id}/plan.
func (s *Server) PlanTask(ctx context.Context, req api.PlanTaskRequestObject) (api.PlanTaskResponseObject, error) {
	n, err := s.service.PlanTask(ctx, req.Id, accountFilterFromAPI(req.Body))
	if err != nil {
		return nil, err
	}
	return api.PlanTask202JSONResponse{Accounts: n}, nil
}

// GetTaskPlan answers GET /tasks/{id}/plan.
func (s *Server) GetTaskPlan(ctx context.Context, req api.GetTaskPlanRequestObject) (api.GetTaskPlanResponseObject, error) {
	q := migration.PlanQuery{}
	if req.Params.Filter != nil {
		q.Filter = migration.PlanFilter(*req.Params.Filter)
	}
	if req.Params.After != nil {
		q.After = *req.Params.After
	}
	if req.Params.Limit != nil {
		if *req.Params.Limit < 1 {
			return nil, &migration.InvalidError{Field: "limit", Reason: fmt.Sprintf("must be from 1 to %d", migration.MaxPlanPage)}
		}
		q.Limit = *req.Params.Limit
	}
	p, err := s.service.TaskPlan(ctx, req.Id, q)
	if err != nil {
		return nil, err
	}
	out := api.GetTaskPlan200JSONResponse{Accounts: make([]api.AccountPlanSummary, len(p.Accounts)), Listed: p.Listed,
		Planned: p.Planned, Pending: p.Pending, Done: p.Done, Failed: p.Failed, Blocked: p.Blocked, WithProblems: p.WithProblems,
		SourceBytes: p.SourceBytes, ToCopyBytes: p.ToCopyBytes, RateBytesPerSecond: float32(p.Rate)}
	if p.Estimate != nil {
		seconds := int64(p.Estimate.Seconds())
		out.EstimateSeconds = &seconds
	}
	for i, r := range p.Accounts {
		f := r.Figures
		out.Accounts[i] = api.AccountPlanSummary{AccountId: r.AccountID, SourceLogin: r.SourceLogin, DestinationLogin: r.DestinationLogin,
			State: api.PlanState(r.State), Blocking: r.Blocking, Error: r.Error, RequestedAt: r.RequestedAt, PlannedAt: r.PlannedAt,
			Folders: f.Folders, SourceMessages: f.SourceMessages, SourceBytes: f.SourceBytes, ToCopyBytes: f.ToCopyBytes,
			QuotaFree: f.QuotaFree, Problems: planProblemsOf(f.Problems)}
	}
	return out, nil
}

// GetAccountPlan answers GET /tasks/{id}/accounts/{accountId}/plan.
func (s *Server) GetAccountPlan(ctx context.Context, req api.GetAccountPlanRequestObject) (api.GetAccountPlanResponseObject, error) {
	r, err := s.service.AccountPlan(ctx, req.Id, req.AccountId)
	if err != nil {
		return nil, err
	}
	out := api.GetAccountPlan200JSONResponse{AccountId: r.AccountID, SourceLogin: r.SourceLogin, DestinationLogin: r.DestinationLogin,
		State: api.PlanState(r.State), Blocking: r.Blocking, Error: r.Error, RequestedAt: r.RequestedAt, PlannedAt: r.PlannedAt}
	if r.Plan != nil {
		plan := accountPlanOf(*r.Plan)
		out.Plan = &plan
	}
	return out, nil
}

func planProblemsOf(problems []migration.PlanProblem) []api.PlanProblem {
	out := make([]api.PlanProblem, len(problems))
	for i, problem := range problems {
		out[i] = api.PlanProblem{Kind: api.PlanProblemKind(problem.Kind), Blocking: problem.Blocking, Folder: problem.Folder, Words: problem.Words}
	}
	return out
}

func accountPlanOf(p migration.AccountPlan) api.AccountPlan {
	out := api.AccountPlan{SourceCapabilities: p.SourceCapabilities, DestinationCapabilities: p.DestinationCapabilities,
		Folders: make([]api.PlannedFolder, len(p.Folders)), Excluded: orEmptyList(p.Excluded), SourceMessages: p.SourceMessages, SourceBytes: p.SourceBytes,
		ToCopyBytes: p.ToCopyBytes, DestinationMessages: p.DestinationMessages, QuotaFree: p.QuotaFree, SizeLimit: p.SizeLimit,
		Oversize: make([]api.OversizeMessage, len(p.Oversize)), Problems: planProblemsOf(p.Problems)}
	for i, f := range p.Folders {
		out.Folders[i] = api.PlannedFolder{Source: f.Source, Destination: f.Destination, Role: f.Role, Create: f.Create,
			Wanted: f.Wanted, Moved: f.Moved, SourceMessages: f.SourceMessages, SourceBytes: f.SourceBytes,
			DestinationMessages: f.DestinationMessages, ToCopyBytes: f.ToCopyBytes, OversizeMessages: f.OversizeMessages,
			PreviousDestination: f.PreviousDestination}
	}
	for i, m := range p.Oversize {
		out.Oversize[i] = api.OversizeMessage{Folder: m.Folder, Uid: int64(m.UID), Size: m.Size}
	}
	if p.Scripts != nil {
		out.Scripts = scriptsToAPI(*p.Scripts, p.Scripts.PlanSummary())
	}
	return out
}

// orEmptyList is list, or [] for nil (a plan stored before it had one):
// the API's lists are never null.
func orEmptyList(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
