// Package httpapi serves mailmigrate's REST API: strict handlers that
// implement the interface generated from api/openapi.yaml, the table that
// turns domain errors into plain-text responses, the router with its
// middleware, health checks, the served OpenAPI file, Swagger UI and the
// browser front end.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/metrics"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/web"
)

// BasePath is where the versioned API lives.
const BasePath = "/api/v1"

// Server implements the generated strict server interface on the domain.
type Server struct {
	service       *migration.Service
	checkEndpoint func(context.Context, migration.Endpoint) migration.EndpointCheck
	authorizer    Authorizer
}

var _ api.StrictServerInterface = (*Server)(nil)

// Options configure NewHandler.
type Options struct {
	Service *migration.Service
	Logger  *slog.Logger
	// Ready reports whether the service can take requests (database
	// reachable and migrated); /readyz answers 503 while it fails.
	Ready func(ctx context.Context) error
	// Events wakes the live event streams (event.Broker).
	Events Waker
	// Metrics, when set, counts requests and streams and is served at
	// /metrics.
	Metrics *metrics.Metrics
	// APIToken, when set, is a bearer token every API request and event
	// stream may carry (401 without one that Credentials or this takes).
	APIToken string
	// Credentials, when set, take the tokens the database holds. With
	// neither this nor APIToken the API asks for no token: the serve
	// command allows that only with --insecure-no-auth.
	Credentials Credentials
	// AllowedHosts are the host names, beyond IP addresses and localhost,
	// that requests may name in Host ("*": any).
	AllowedHosts []string
	// Limits bound request bodies, timeouts and event streams; zero fields
	// take the defaults.
	Limits Limits
	// CheckEndpoint connects to an endpoint's server without logging in
	// (sides.CheckEndpoint); nil answers the endpoint checks with 500.
	CheckEndpoint func(context.Context, migration.Endpoint) migration.EndpointCheck
	// Authorizer gets accounts their refresh tokens (signin.Authorizer);
	// nil answers the authorizations with 500.
	Authorizer Authorizer
	// Audit, when set, keeps the audit trail of the requests that change
	// something (auditRequests).
	Audit AuditTrail
}

// credentials are the tokens the API takes; nil: none is asked for.
func (opts Options) credentials() Credentials {
	switch {
	case opts.APIToken == "":
		return opts.Credentials
	case opts.Credentials == nil:
		return StaticToken(opts.APIToken)
	}
	return AnyCredentials{StaticToken(opts.APIToken), opts.Credentials}
}

// methodNotAllowed answers 405 with the Allow header that RFC 9110
// §15.5.6 requires: the methods the path has.
func methodNotAllowed(routes chi.Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if routes.Match(chi.NewRouteContext(), method, r.URL.Path) {
				allowed = append(allowed, method)
				if method == http.MethodGet {
					allowed = append(allowed, http.MethodHead)
				}
			}
		}
		allowOnly(allowed...)(w, r)
	}
}

// allowOnly answers 405 for a path that has only the methods allowed.
func allowOnly(allowed ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeText(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// postOnlyAccountPaths take POST only. Their last segment would otherwise
// be taken for an account id by the other methods.
var postOnlyAccountPaths = []string{
	BasePath + "/tasks/{id}/accounts/import",
	BasePath + "/tasks/{id}/accounts/delete",
}

// NewHandler returns the whole HTTP surface of the service.
func NewHandler(opts Options) http.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	limits := opts.Limits.withDefaults()
	r := chi.NewRouter()
	r.Use(middleware.RequestID, exposeRequestID, opts.Metrics.Middleware, securityHeaders, recoverPanics(logger), logRequests(logger))
	creds := opts.credentials()
	if opts.Audit != nil {
		// Before the checks below, so that what they refuse is recorded.
		r.Use(auditRequests(opts.Audit, creds != nil, logger))
	}
	r.Use(requestDeadlines(limits), allowHosts(opts.AllowedHosts), refuseCrossOrigin,
		// HEAD is answered wherever GET is (RFC 9110 §9.3.2), by the GET
		// handler: net/http sends its headers without the body.
		middleware.GetHead)
	if creds != nil {
		r.Use(requireToken(creds, logger), requireRole(r))
	}
	notFound := func(w http.ResponseWriter, r *http.Request) { writeText(w, http.StatusNotFound, "not found") }
	r.NotFound(notFound)
	r.MethodNotAllowed(methodNotAllowed(r))
	// Open routes, outside BasePath: health, readiness, Prometheus'
	// /metrics, the docs and the front end at /.
	r.Get("/healthz", healthz)
	r.Get("/readyz", readyz(opts.Ready, logger))
	if opts.Metrics != nil {
		r.Get("/metrics", opts.Metrics.Handler().ServeHTTP)
	}
	mountDocs(r)
	ui := web.Handler(http.HandlerFunc(notFound))
	r.Get("/", ui.ServeHTTP)
	r.Get(web.AssetPrefix+"*", ui.ServeHTTP)
	if opts.Authorizer != nil {
		r.Get(CallbackPath, authorizationCallback(opts.Authorizer, logger))
	}
	// The sign-in's body is the API's kind: JSON, said so, within limits.
	r.With(checkJSONBody(limits)).Post(SignInPath, signIn(opts.Service, logger))
	r.Post(SignOutPath, signOut(opts.Service, logger))
	if opts.Events != nil {
		r.Get(streamPath, streamEvents(opts.Service, opts.Events, make(streamSlots, limits.MaxEventStreams), opts.Metrics, logger))
	}

	strict := api.NewStrictHandlerWithOptions(&Server{service: opts.Service, checkEndpoint: opts.CheckEndpoint, authorizer: opts.Authorizer}, nil, api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  requestErrorHandler(logger),
		ResponseErrorHandlerFunc: responseErrorHandler(logger),
	})
	api.HandlerWithOptions(strict, api.ChiServerOptions{
		BaseURL:    BasePath,
		BaseRouter: r,
		// Operation middlewares run after path parameters are bound, so a
		// bad id is reported before a bad body, as the interface orders it.
		Middlewares:      []api.MiddlewareFunc{checkJSONBody(limits)},
		ErrorHandlerFunc: paramErrorHandler,
	})
	for _, path := range postOnlyAccountPaths {
		for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			r.MethodFunc(method, path, allowOnly(http.MethodPost))
		}
	}
	return r
}
