package migration

import (
	"context"
	"time"
)

// Store is all the storage the domain needs.
type Store interface {
	EndpointStore
	TaskStore
	AccountStore
	JobStore
	EventStore
	PassStore
	AccountRecordStore
	WebhookStore
	ScheduleStore
	PlanStore
	MailStore
	AuditStore
	UserStore
	SignInStore
	WorkStore
}

// Service applies the domain rules on top of a store. Handlers call it and
// nothing below it.
type Service struct {
	store Store
	// Clock is the service's now for schedules (time.Now when nil): tests
	// move it on.
	Clock func() time.Time
	// Zone is the server's time zone, that schedules are told in
	// (ServerZone when nil).
	Zone *time.Location
	// MailServer says whether an SMTP server is configured: tasks may
	// then mail their summaries.
	MailServer bool
	// Webhooks sends a webhook's test call (TestWebhook); nil: none is.
	Webhooks WebhookTester
}

// NewService returns a Service backed by store.
func NewService(store Store) *Service {
	return &Service{store: store}
}

// CreateEndpoint validates e and stores it, returning the new id.
func (s *Service) CreateEndpoint(ctx context.Context, e Endpoint) (int64, error) {
	if err := e.Normalize(); err != nil {
		return 0, err
	}
	if e.Auth.Method == "" {
		e.Auth.Method = AuthPassword
	}
	if e.Auth.Method == AuthMaster && e.Auth.MasterPassword == "" {
		return 0, ErrMasterPasswordMissing
	}
	if e.Auth.Method == AuthOAuth2 && e.Auth.OAuth2.Grant.usesClientSecret() && e.Auth.OAuth2.ClientSecret == "" {
		return 0, MissingClientSecret(e.Auth.OAuth2.Grant)
	}
	return s.store.EndpointCreate(ctx, e)
}

// Endpoint returns one endpoint.
func (s *Service) Endpoint(ctx context.Context, id int64) (Endpoint, error) {
	return s.store.EndpointGet(ctx, id)
}

// Endpoints lists every endpoint in ascending id order.
func (s *Service) Endpoints(ctx context.Context) ([]Endpoint, error) {
	return s.store.EndpointList(ctx)
}

// UpdateEndpoint replaces the record of endpoint e.ID: the whole of it,
// but for the authentication, which an empty e.Auth.Method keeps, and the
// master password, which an empty one keeps.
func (s *Service) UpdateEndpoint(ctx context.Context, e Endpoint) error {
	if err := e.Normalize(); err != nil {
		return err
	}
	return s.store.EndpointUpdate(ctx, e)
}

// DeleteEndpoint deletes an endpoint that no task uses.
func (s *Service) DeleteEndpoint(ctx context.Context, id int64) error {
	return s.store.EndpointDelete(ctx, id)
}
