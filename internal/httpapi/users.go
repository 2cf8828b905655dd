package httpapi

import (
	"context"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// anyone is the principal of a service that asks for no token
// (--insecure-no-auth): anyone may do anything.
var anyone = migration.Principal{TokenName: noTokenAsked, Role: migration.RoleAdmin}

// principal is whose token let ctx's request in.
func principal(ctx context.Context) migration.Principal {
	if p, ok := principalOf(ctx); ok {
		return p
	}
	return anyone
}

// GetMe answers GET /me.
func (s *Server) GetMe(ctx context.Context, _ api.GetMeRequestObject) (api.GetMeResponseObject, error) {
	p := principal(ctx)
	return api.GetMe200JSONResponse{Name: p.Holder(), Role: api.Role(p.Role), UserId: p.UserID, TokenId: p.TokenID}, nil
}

// ListUsers answers GET /users.
func (s *Server) ListUsers(ctx context.Context, _ api.ListUsersRequestObject) (api.ListUsersResponseObject, error) {
	users, err := s.service.Users(ctx)
	if err != nil {
		return nil, err
	}
	out := make(api.ListUsers200JSONResponse, len(users))
	for i, u := range users {
		out[i] = userToAPI(u)
	}
	return out, nil
}

// CreateUser answers POST /users.
func (s *Server) CreateUser(ctx context.Context, req api.CreateUserRequestObject) (api.CreateUserResponseObject, error) {
	in := req.Body
	first := migration.TokenInput{Name: "first token", Lifetime: days(in.ExpiresInDays)}
	if in.TokenName != nil {
		first.Name = *in.TokenName
	}
	user, token, err := s.service.CreateUser(ctx, migration.UserInput{Name: in.Name, Role: migration.Role(in.Role)}, first)
	if err != nil {
		return nil, err
	}
	return api.CreateUser201JSONResponse{User: userToAPI(user), Token: api.NewAPIToken(newTokenToAPI(token))}, nil
}

// DeleteUser answers DELETE /users/{id}.
func (s *Server) DeleteUser(ctx context.Context, req api.DeleteUserRequestObject) (api.DeleteUserResponseObject, error) {
	if err := s.service.DeleteUser(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.DeleteUser204Response{}, nil
}

// ListTokens answers GET /tokens.
func (s *Server) ListTokens(ctx context.Context, _ api.ListTokensRequestObject) (api.ListTokensResponseObject, error) {
	tokens, err := s.service.Tokens(ctx, principal(ctx))
	if err != nil {
		return nil, err
	}
	out := make(api.ListTokens200JSONResponse, len(tokens))
	for i, t := range tokens {
		out[i] = tokenToAPI(t)
	}
	return out, nil
}

// CreateToken answers POST /tokens.
func (s *Server) CreateToken(ctx context.Context, req api.CreateTokenRequestObject) (api.CreateTokenResponseObject, error) {
	token, err := s.service.CreateToken(ctx, principal(ctx),
		migration.TokenInput{Name: req.Body.Name, Lifetime: days(req.Body.ExpiresInDays)})
	if err != nil {
		return nil, err
	}
	return api.CreateToken201JSONResponse(newTokenToAPI(token)), nil
}

// RevokeToken answers DELETE /tokens/{id}.
func (s *Server) RevokeToken(ctx context.Context, req api.RevokeTokenRequestObject) (api.RevokeTokenResponseObject, error) {
	if err := s.service.RevokeToken(ctx, principal(ctx), req.Id); err != nil {
		return nil, err
	}
	return api.RevokeToken204Response{}, nil
}

// days is a lifetime of n days, 0 for none given; a count out of range
// stays out of range, for the domain to refuse.
func days(n *int) time.Duration {
	if n == nil {
		return 0
	}
	if *n <= 0 {
		return -1
	}
	return time.Duration(*n) * 24 * time.Hour
}

func userToAPI(u migration.User) api.User {
	return api.User{Id: u.ID, Name: u.Name, Role: api.Role(u.Role), CreatedAt: u.CreatedAt}
}

func tokenToAPI(t migration.APIToken) api.APIToken {
	out := api.APIToken{Id: t.ID, Name: t.Name, UserId: t.UserID, UserName: t.UserName, CreatedAt: t.CreatedAt}
	if !t.ExpiresAt.IsZero() {
		out.ExpiresAt = &t.ExpiresAt
	}
	if !t.RevokedAt.IsZero() {
		out.RevokedAt = &t.RevokedAt
	}
	return out
}

func newTokenToAPI(t migration.NewAPIToken) api.NewAPIToken {
	listed := tokenToAPI(t.APIToken)
	return api.NewAPIToken{Id: listed.Id, Name: listed.Name, UserId: listed.UserId, UserName: listed.UserName,
		CreatedAt: listed.CreatedAt, ExpiresAt: listed.ExpiresAt, Secret: t.Secret}
}

// SetUserPassword answers PUT /users/{id}/password.
func (s *Server) SetUserPassword(ctx context.Context, req api.SetUserPasswordRequestObject) (api.SetUserPasswordResponseObject, error) {
	if err := s.service.SetPassword(ctx, principal(ctx), req.Id, req.Body.Password); err != nil {
		return nil, err
	}
	return api.SetUserPassword204Response{}, nil
}
