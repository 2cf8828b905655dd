package httpapi

import (
	"context"

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
	p, err := s.service.TaskPlan(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	out := api.GetTaskPlan200JSONResponse{Accounts: make([]api.AccountPlanRecord, len(p.Accounts)),
		Pending: p.Pending, Done: p.Done, Failed: p.Failed, Blocked: p.Blocked,
		SourceBytes: p.SourceBytes, ToCopyBytes: p.ToCopyBytes, RateBytesPerSecond: float32(p.Rate)}
	if p.Estimate != nil {
		seconds := int64(p.Estimate.Seconds())
		out.EstimateSeconds = &seconds
	}
	for i, r := range p.Accounts {
		out.Accounts[i] = api.AccountPlanRecord{AccountId: r.AccountID, SourceLogin: r.SourceLogin, DestinationLogin: r.DestinationLogin,
			State: api.AccountPlanRecordState(r.State), Blocking: r.Blocking, Error: r.Error, RequestedAt: r.RequestedAt, PlannedAt: r.PlannedAt}
		if r.Plan != nil {
			plan := accountPlanOf(*r.Plan)
			out.Accounts[i].Plan = &plan
		}
	}
	return out, nil
}

func accountPlanOf(p migration.AccountPlan) api.AccountPlan {
	out := api.AccountPlan{SourceCapabilities: p.SourceCapabilities, DestinationCapabilities: p.DestinationCapabilities,
		Folders: make([]api.PlannedFolder, len(p.Folders)), Excluded: orEmptyList(p.Excluded), SourceMessages: p.SourceMessages, SourceBytes: p.SourceBytes,
		ToCopyBytes: p.ToCopyBytes, DestinationMessages: p.DestinationMessages, QuotaFree: p.QuotaFree, SizeLimit: p.SizeLimit,
		Oversize: make([]api.OversizeMessage, len(p.Oversize)), Problems: make([]api.PlanProblem, len(p.Problems))}
	for i, f := range p.Folders {
		out.Folders[i] = api.PlannedFolder{Source: f.Source, Destination: f.Destination, Role: f.Role, Create: f.Create,
			Wanted: f.Wanted, Moved: f.Moved, SourceMessages: f.SourceMessages, SourceBytes: f.SourceBytes,
			DestinationMessages: f.DestinationMessages, ToCopyBytes: f.ToCopyBytes, OversizeMessages: f.OversizeMessages,
			PreviousDestination: f.PreviousDestination}
	}
	for i, m := range p.Oversize {
		out.Oversize[i] = api.OversizeMessage{Folder: m.Folder, Uid: int64(m.UID), Size: m.Size}
	}
	for i, problem := range p.Problems {
		out.Problems[i] = api.PlanProblem{Kind: api.PlanProblemKind(problem.Kind), Blocking: problem.Blocking, Folder: problem.Folder, Words: problem.Words}
	}
	return out
}

// orEmptyList is list, or [] for a plan stored before it had one.
func orEmptyList(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
