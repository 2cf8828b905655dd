package httpapi

import (
	"context"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// ListAccountPasses answers GET /tasks/{id}/accounts/{accountId}/passes.
func (s *Server) ListAccountPasses(ctx context.Context, req api.ListAccountPassesRequestObject) (api.ListAccountPassesResponseObject, error) {
	passes, err := s.service.AccountPasses(ctx, req.Id, req.AccountId)
	if err != nil {
		return nil, err
	}
	return api.ListAccountPasses200JSONResponse(accountPassesOf(passes)), nil
}

// ListAccountRunsByOldPath answers GET
// /tasks/{id}/accounts/{accountId}/runs, the old path of the passes.
func (s *Server) ListAccountRunsByOldPath(ctx context.Context, req api.ListAccountRunsByOldPathRequestObject) (api.ListAccountRunsByOldPathResponseObject, error) {
	passes, err := s.service.AccountPasses(ctx, req.Id, req.AccountId)
	if err != nil {
		return nil, err
	}
	return api.ListAccountRunsByOldPath200JSONResponse(accountPassesOf(passes)), nil
}

// accountPassesOf is what each pass did for an account, as the API shows it.
func accountPassesOf(passes []migration.AccountPass) []api.AccountPass {
	out := make([]api.AccountPass, len(passes))
	for i, p := range passes {
		f := p.Figures
		out[i] = api.AccountPass{Pass: p.Pass, State: api.AccountState(p.State), StartedAt: p.StartedAt, FinishedAt: p.FinishedAt,
			MessagesCopied: f.MessagesCopied, MessagesSkipped: f.MessagesSkipped, MessagesFailed: f.MessagesFailed,
			BytesCopied: f.BytesCopied, LastError: p.LastError}
		if f.SourceCounted {
			out[i].SourceMessages, out[i].SourceBytes = &f.SourceMessages, &f.SourceBytes
		}
	}
	return out
}

// ListAccountFolders answers GET /tasks/{id}/accounts/{accountId}/folders.
func (s *Server) ListAccountFolders(ctx context.Context, req api.ListAccountFoldersRequestObject) (api.ListAccountFoldersResponseObject, error) {
	folders, err := s.service.AccountFolders(ctx, req.Id, req.AccountId)
	if err != nil {
		return nil, err
	}
	out := make(api.ListAccountFolders200JSONResponse, len(folders))
	for i, f := range folders {
		out[i] = api.AccountFolder{Source: f.Source, Destination: f.Destination, SourceMessages: f.SourceMessages, SourceBytes: f.SourceBytes,
			DestinationMessages: f.DestinationMessages, Verified: f.Verified, Complete: f.Complete,
			Refused: make([]api.MessageRefusal, len(f.Refusals)), DroppedKeywords: f.DroppedKeywords,
			Altered: f.Altered, AlteredExamples: make([]api.AlteredCopy, len(f.AlteredExamples))}
		for j, a := range f.AlteredExamples {
			out[i].AlteredExamples[j] = api.AlteredCopy{Uid: int64(a.SourceUID), DestinationUid: int64(a.DestinationUID), Subject: a.Subject, What: a.What}
		}
		for j, r := range f.Refusals {
			out[i].Refused[j] = api.MessageRefusal{Uid: int64(r.UID), Side: r.Side, Reason: r.Reason, Subject: r.Subject, Size: r.Size}
			if !r.Date.IsZero() {
				out[i].Refused[j].Date = &r.Date
			}
		}
		if out[i].DroppedKeywords == nil {
			out[i].DroppedKeywords = []string{}
		}
	}
	return out, nil
}

// ListAccountEvents answers GET /tasks/{id}/accounts/{accountId}/events.
func (s *Server) ListAccountEvents(ctx context.Context, req api.ListAccountEventsRequestObject) (api.ListAccountEventsResponseObject, error) {
	after, limit, err := eventPageOf(req.Params.After, req.Params.Limit)
	if err != nil {
		return nil, err
	}
	events, err := s.service.AccountEvents(ctx, req.Id, req.AccountId, after, limit)
	if err != nil {
		return nil, err
	}
	return api.ListAccountEvents200JSONResponse(eventsToAPI(events)), nil
}
