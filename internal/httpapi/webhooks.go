package httpapi

import (
	"cmp"
	"context"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// GetTaskWebhook answers GET /tasks/{id}/webhook.
func (s *Server) GetTaskWebhook(ctx context.Context, req api.GetTaskWebhookRequestObject) (api.GetTaskWebhookResponseObject, error) {
	w, err := s.service.Webhook(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetTaskWebhook200JSONResponse{Url: w.URL, SecretSet: w.SecretSet, Calls: api.WebhookCalls(cmp.Or(w.Calls, migration.WebhookPerPass))}, nil
}

// SetTaskWebhook answers PUT /tasks/{id}/webhook.
func (s *Server) SetTaskWebhook(ctx context.Context, req api.SetTaskWebhookRequestObject) (api.SetTaskWebhookResponseObject, error) {
	w, err := s.service.SetWebhook(ctx, req.Id, migration.Webhook{URL: req.Body.Url, Secret: migration.Password(req.Body.Secret),
		Calls: migration.WebhookCalls(req.Body.Calls)})
	if err != nil {
		return nil, err
	}
	return api.SetTaskWebhook200JSONResponse{Url: w.URL, SecretSet: w.SecretSet, Calls: api.WebhookCalls(w.Calls)}, nil
}

// RemoveTaskWebhook answers DELETE /tasks/{id}/webhook.
func (s *Server) RemoveTaskWebhook(ctx context.Context, req api.RemoveTaskWebhookRequestObject) (api.RemoveTaskWebhookResponseObject, error) {
	if err := s.service.RemoveWebhook(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.RemoveTaskWebhook204Response{}, nil
}

// TestTaskWebhook answers POST /tasks/{id}/webhook/test.
func (s *Server) TestTaskWebhook(ctx context.Context, req api.TestTaskWebhookRequestObject) (api.TestTaskWebhookResponseObject, error) {
	r, err := s.service.TestWebhook(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.TestTaskWebhook200JSONResponse{Ok: r.OK, Status: r.Status, Error: r.Error, TookMs: r.Took.Milliseconds()}, nil
}

// ListWebhookDeliveries answers GET /tasks/{id}/webhook/deliveries.
func (s *Server) ListWebhookDeliveries(ctx context.Context, req api.ListWebhookDeliveriesRequestObject) (api.ListWebhookDeliveriesResponseObject, error) {
	deliveries, err := s.service.WebhookDeliveries(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.ListWebhookDeliveries200JSONResponse(deliveriesOf(deliveries)), nil
}

// deliveriesOf is a delivery log (of webhook calls or mails) as the API
// shows it.
func deliveriesOf(deliveries []migration.WebhookDelivery) []api.WebhookDelivery {
	out := make([]api.WebhookDelivery, len(deliveries))
	for i, d := range deliveries {
		out[i] = api.WebhookDelivery{Id: d.ID, EventSeq: d.EventSeq, Kind: api.EventKind(d.Kind), State: api.WebhookDeliveryState(d.State),
			Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: d.CreatedAt}
		if d.State == migration.DeliveryPending {
			out[i].NextAttemptAt = &d.NextAttemptAt
		} else {
			out[i].FinishedAt = &d.FinishedAt
		}
	}
	return out
}
