package httpapi

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// Authorizer gets accounts their refresh tokens from their users'
// sign-ins (signin.Authorizer).
type Authorizer interface {
	Start(ctx context.Context, taskID, accountID int64, in migration.AuthorizationInput) (migration.Authorization, error)
	Complete(ctx context.Context, address string) (migration.AuthorizedAccount, error)
}

// CallbackPath is where the console's browser authorizations come back:
// outside BasePath and open without the API token, since a provider's
// redirect carries none; the flow's state, good once, is what counts.
const CallbackPath = "/oauth/callback"

var errAuthorizationsNotWired = errors.New("authorizations are not wired")

// AuthorizeAccount answers POST /tasks/{id}/accounts/{accountId}/authorize.
func (s *Server) AuthorizeAccount(ctx context.Context, req api.AuthorizeAccountRequestObject) (api.AuthorizeAccountResponseObject, error) {
	if s.authorizer == nil {
		return nil, errAuthorizationsNotWired
	}
	in := migration.AuthorizationInput{Side: string(req.Body.Side), RedirectURI: req.Body.RedirectUri, AlsoAccept: req.Body.AlsoAccept}
	if req.Body.Flow != nil {
		in.Flow = migration.AuthorizationFlow(*req.Body.Flow)
	}
	a, err := s.authorizer.Start(ctx, req.Id, req.AccountId, in)
	if err != nil {
		return nil, err
	}
	return api.AuthorizeAccount200JSONResponse{Flow: api.AuthorizationFlow(a.Flow), UserCode: a.UserCode, VerificationUri: a.VerificationURI,
		VerificationUriComplete: a.VerificationURIComplete, AuthorizationUrl: a.AuthorizationURL, ExpiresAt: a.ExpiresAt}, nil
}

// CompleteAuthorization answers POST /authorizations/complete.
func (s *Server) CompleteAuthorization(ctx context.Context, req api.CompleteAuthorizationRequestObject) (api.CompleteAuthorizationResponseObject, error) {
	if s.authorizer == nil {
		return nil, errAuthorizationsNotWired
	}
	done, err := s.authorizer.Complete(ctx, req.Body.Address)
	if err != nil {
		return nil, err
	}
	return api.CompleteAuthorization200JSONResponse{TaskId: done.TaskID, AccountId: done.AccountID,
		Side: api.AuthorizedAccountSide(done.Side), Login: done.Login}, nil
}

// callbackPage is what the browser shows when it comes back from the
// provider's sign-in. It runs no script (the pages' policy forbids inline
// ones); the console's page, still open, learns of it from the event log.
var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>mailmigrate: {{.Title}}</title></head>
<body>
<h1>{{.Title}}</h1>
<p id="outcome">{{.Words}}</p>
</body>
</html>
`))

// authorizationCallback finishes a browser authorization that comes back
// to the service itself.
func authorizationCallback(authorizer Authorizer, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		page := struct{ Title, Words string }{}
		status := http.StatusOK
		done, err := authorizer.Complete(r.Context(), r.URL.String())
		var invalid *migration.InvalidError
		switch {
		case err == nil:
			page.Title = "Authorized"
			page.Words = done.Login + ": the " + done.Side + "'s refresh token is stored. You can close this window."
		case errors.As(err, &invalid):
			status = http.StatusBadRequest
			page.Title, page.Words = "Not authorized", "The "+invalid.Error()+"."
		default:
			logger.Error("a browser authorization could not be finished", "err", err)
			status = http.StatusInternalServerError
			page.Title, page.Words = "Not authorized", "The service could not finish the authorization: "+err.Error()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		callbackPage.Execute(w, page) //nolint:errcheck // a browser that left is no matter
	}
}
