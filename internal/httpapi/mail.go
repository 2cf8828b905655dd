package httpapi

import (
	"context"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// GetTaskMail answers GET /tasks/{id}/mail.
func (s *Server) GetTaskMail(ctx context.Context, req api.GetTaskMailRequestObject) (api.GetTaskMailResponseObject, error) {
	m, err := s.service.Mail(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetTaskMail200JSONResponse(mailOf(m)), nil
}

// SetTaskMail answers PUT /tasks/{id}/mail.
func (s *Server) SetTaskMail(ctx context.Context, req api.SetTaskMailRequestObject) (api.SetTaskMailResponseObject, error) {
	m, err := s.service.SetMail(ctx, req.Id, req.Body.To)
	if err != nil {
		return nil, err
	}
	return api.SetTaskMail200JSONResponse(mailOf(m)), nil
}

// RemoveTaskMail answers DELETE /tasks/{id}/mail.
func (s *Server) RemoveTaskMail(ctx context.Context, req api.RemoveTaskMailRequestObject) (api.RemoveTaskMailResponseObject, error) {
	if err := s.service.RemoveMail(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.RemoveTaskMail204Response{}, nil
}

// ListMailDeliveries answers GET /tasks/{id}/mail/deliveries.
func (s *Server) ListMailDeliveries(ctx context.Context, req api.ListMailDeliveriesRequestObject) (api.ListMailDeliveriesResponseObject, error) {
	deliveries, err := s.service.MailDeliveries(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.ListMailDeliveries200JSONResponse(deliveriesOf(deliveries)), nil
}

func mailOf(m migration.MailSettings) api.Mail {
	to := m.To
	if to == nil {
		to = []string{}
	}
	return api.Mail{To: to, SmtpConfigured: m.ServerSet}
}
