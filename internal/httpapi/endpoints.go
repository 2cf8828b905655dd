package httpapi

import (
	"context"
	"errors"
	"strings"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// ListEndpoints answers GET /endpoints.
func (s *Server) ListEndpoints(ctx context.Context, _ api.ListEndpointsRequestObject) (api.ListEndpointsResponseObject, error) {
	endpoints, err := s.service.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	out := make(api.ListEndpoints200JSONResponse, len(endpoints))
	for i, e := range endpoints {
		out[i] = endpointToAPI(e)
	}
	return out, nil
}

// CreateEndpoint answers POST /endpoints.
func (s *Server) CreateEndpoint(ctx context.Context, req api.CreateEndpointRequestObject) (api.CreateEndpointResponseObject, error) {
	e, err := endpointFromAPI(0, req.Body)
	if err != nil {
		return nil, err
	}
	id, err := s.service.CreateEndpoint(ctx, e)
	if err != nil {
		return nil, err
	}
	return api.CreateEndpoint201JSONResponse{Id: id}, nil
}

// GetEndpoint answers GET /endpoints/{id}.
func (s *Server) GetEndpoint(ctx context.Context, req api.GetEndpointRequestObject) (api.GetEndpointResponseObject, error) {
	e, err := s.service.Endpoint(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetEndpoint200JSONResponse(endpointToAPI(e)), nil
}

// UpdateEndpoint answers PUT /endpoints/{id}; the path's id wins over any in the body.
func (s *Server) UpdateEndpoint(ctx context.Context, req api.UpdateEndpointRequestObject) (api.UpdateEndpointResponseObject, error) {
	e, err := endpointFromAPI(req.Id, req.Body)
	if err != nil {
		return nil, err
	}
	if err := s.service.UpdateEndpoint(ctx, e); err != nil {
		return nil, err
	}
	return api.UpdateEndpoint204Response{}, nil
}

// DeleteEndpoint answers DELETE /endpoints/{id}.
func (s *Server) DeleteEndpoint(ctx context.Context, req api.DeleteEndpointRequestObject) (api.DeleteEndpointResponseObject, error) {
	if err := s.service.DeleteEndpoint(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.DeleteEndpoint204Response{}, nil
}

// endpointFromAPI is the domain's endpoint for a request body. Only a
// body without auth keeps the stored authentication: an auth object
// without a method is refused.
func endpointFromAPI(id int64, in *api.EndpointInput) (migration.Endpoint, error) {
	e := migration.Endpoint{
		ID:            id,
		RoleLabel:     in.RoleLabel,
		Host:          in.Host,
		Port:          in.Port,
		TLSMode:       migration.TLSMode(in.TlsMode),
		TLSSkipVerify: in.TlsSkipVerify,
		Profile:       migration.Profile(in.Profile),
	}
	if l := in.Limits; l != nil {
		e.Limits = migration.EndpointLimits{MaxMessageBytes: l.MaxMessageBytes, DailyDownloadBytes: l.DailyDownloadBytes,
			DailyUploadBytes: l.DailyUploadBytes, Connections: l.Connections, AccountConnections: l.AccountConnections}
	}
	if s := in.Sieve; s != nil {
		e.Sieve = migration.EndpointSieve{Port: s.Port, TLSMode: migration.TLSMode(s.TlsMode)}
	}
	if a := in.Auth; a != nil {
		e.Auth = migration.EndpointAuth{Method: migration.AuthMethod(a.Method), MasterLogin: a.MasterLogin,
			MasterForm: migration.MasterForm(a.MasterForm), MasterPassword: migration.Password(a.MasterPassword)}
		if a.Method == "" {
			return e, &migration.InvalidError{Field: "auth.method", Reason: "must be password|master|oauth2"}
		}
		if o := a.Oauth2; o != nil {
			e.Auth.OAuth2 = migration.OAuth2Settings{Grant: migration.OAuth2Grant(o.Grant), TokenURL: o.TokenUrl, DeviceURL: o.DeviceUrl, AuthorizationURL: o.AuthorizationUrl,
				ClientID: o.ClientId, Scope: o.Scope, Mechanism: migration.TokenMechanism(o.Mechanism), ClientSecret: migration.Password(o.ClientSecret),
				Provider: migration.OAuth2Provider(o.Provider), Tenant: o.Tenant}
		}
	}
	return e, nil
}

func endpointToAPI(e migration.Endpoint) api.Endpoint {
	return api.Endpoint{
		Id:            e.ID,
		RoleLabel:     e.RoleLabel,
		Host:          e.Host,
		Port:          e.Port,
		TlsMode:       api.TLSMode(e.TLSMode),
		TlsSkipVerify: e.TLSSkipVerify,
		Profile:       api.Profile(e.Profile),
		Limits: api.EndpointLimits{MaxMessageBytes: e.Limits.MaxMessageBytes, DailyDownloadBytes: e.Limits.DailyDownloadBytes,
			DailyUploadBytes: e.Limits.DailyUploadBytes, Connections: e.Limits.Connections, AccountConnections: e.Limits.AccountConnections},
		Auth:  authToAPI(e.Auth),
		Sieve: api.EndpointSieve{Port: e.Sieve.Port, TlsMode: api.TLSMode(e.Sieve.TLSMode)},
	}
}

func authToAPI(a migration.EndpointAuth) api.EndpointAuth {
	out := api.EndpointAuth{Method: api.AuthMethod(a.Method), MasterLogin: a.MasterLogin,
		MasterForm: api.MasterForm(a.MasterForm), MasterPasswordSet: a.MasterPasswordSet}
	if a.Method == migration.AuthOAuth2 {
		o := a.OAuth2
		out.Oauth2 = &api.OAuth2Settings{Grant: api.OAuth2Grant(o.Grant), TokenUrl: o.TokenURL, DeviceUrl: o.DeviceURL, AuthorizationUrl: o.AuthorizationURL,
			ClientId: o.ClientID, ClientSecretSet: o.ClientSecretSet, Scope: o.Scope, Mechanism: api.TokenMechanism(o.Mechanism)}
	}
	return out
}

// CheckEndpoint answers POST /endpoints/{id}/check.
func (s *Server) CheckEndpoint(ctx context.Context, req api.CheckEndpointRequestObject) (api.CheckEndpointResponseObject, error) {
	e, err := s.service.Endpoint(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	check, err := s.check(ctx, e)
	if err != nil {
		return nil, err
	}
	return api.CheckEndpoint200JSONResponse(check), nil
}

// CheckEndpointInput answers POST /endpoint-checks.
func (s *Server) CheckEndpointInput(ctx context.Context, req api.CheckEndpointInputRequestObject) (api.CheckEndpointInputResponseObject, error) {
	e, err := endpointFromAPI(0, req.Body)
	if err != nil {
		return nil, err
	}
	// The check is of the connection: login settings still half filled in
	// are checked when the endpoint is saved.
	withAuth := e
	if err := withAuth.Normalize(); err == nil {
		e = withAuth
	} else if invalid := (*migration.InvalidError)(nil); errors.As(err, &invalid) && strings.HasPrefix(invalid.Field, "auth.") {
		e.Auth = migration.EndpointAuth{}
		if err := e.Normalize(); err != nil {
			return nil, err
		}
	} else {
		return nil, err
	}
	check, err := s.check(ctx, e)
	if err != nil {
		return nil, err
	}
	return api.CheckEndpointInput200JSONResponse(check), nil
}

func (s *Server) check(ctx context.Context, e migration.Endpoint) (api.EndpointCheck, error) {
	if s.checkEndpoint == nil {
		return api.EndpointCheck{}, errors.New("endpoint checks are not wired")
	}
	c := s.checkEndpoint(ctx, e)
	out := api.EndpointCheck{Ok: c.Problem == "", Address: c.Address, ProblemKind: api.EndpointProblem(c.Problem),
		Problem: c.ProblemText, Advice: c.Advice, Greeting: c.Greeting, Capabilities: c.Capabilities, Notes: c.Notes,
		TookMs: c.Took.Milliseconds()}
	if out.ProblemKind == "" {
		out.ProblemKind = api.EndpointProblemNone
	}
	if out.Capabilities == nil {
		out.Capabilities = []string{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if t := c.TLS; t != nil {
		out.Tls = &api.TLSFacts{Version: t.Version, Subject: t.Subject, Issuer: t.Issuer, DnsNames: t.DNSNames, NotAfter: t.NotAfter, Verified: t.Verified}
		if out.Tls.DnsNames == nil {
			out.Tls.DnsNames = []string{}
		}
	}
	return out, nil
}
