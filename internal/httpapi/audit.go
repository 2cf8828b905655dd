package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// The audit trail (docs/security.md#audit-trail): auditRequests records
// every request that changes something, or tried to, after its answer:
// whose token let it in (requireToken notes it), from where, the route
// and the path asked, and the status. Never its body or query, which
// carry passwords and tokens.

// AuditTrail keeps the trail (migration.AuditStore): AuditRecord appends
// entries, in their order.
type AuditTrail interface {
	AuditRecord(ctx context.Context, entries ...migration.AuditEntry) error
}

// auditNote is what a request's handlers learn for its entry: whose token
// let it in, and the route requireRole found for a request it refused
// before routing.
type auditNote struct{ actor, route string }

type auditNoteKey struct{}

// noteActor names, for r's audit entry, whose token let it in.
func noteActor(r *http.Request, holder string) {
	if note, ok := r.Context().Value(auditNoteKey{}).(*auditNote); ok {
		note.actor = holder
	}
}

// noteRoute names, for r's audit entry, the route it asked for.
func noteRoute(r *http.Request, route string) {
	if note, ok := r.Context().Value(auditNoteKey{}).(*auditNote); ok {
		note.route = route
	}
}

// noTokenAsked is the actor of every request where the service asks for
// no token (--insecure-no-auth).
const noTokenAsked = "anyone: the service asks for no token (--insecure-no-auth)"

// signInReturn is the actor of the sign-in callback: the provider sends
// the user's browser there, with no token; the flow's state lets it in.
const signInReturn = "a sign-in's return from the provider (its state, not a token, lets it in)"

// auditRecordTimeout bounds writing a batch of entries (auditQueue).
const auditRecordTimeout = 5 * time.Second

// auditRequests records the requests audited (audited) in trail once
// their handlers answered, and ends each request only when its entry is
// stored; a failure to record is logged, and the answer stands.
// tokensAsked says whether requests need a token: where none does,
// anyone is the actor.
func auditRequests(trail AuditTrail, tokensAsked bool, logger *slog.Logger) func(http.Handler) http.Handler {
	queue := &auditQueue{trail: trail}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !audited(r) {
				next.ServeHTTP(w, r)
				return
			}
			note := &auditNote{}
			switch {
			case routingPath(r) == CallbackPath:
				note.actor = signInReturn
			case !tokensAsked:
				note.actor = noTokenAsked
			}
			ww := statusWriter(w, r)
			next.ServeHTTP(ww, r.WithContext(context.WithValue(r.Context(), auditNoteKey{}, note)))
			route := note.route
			if rctx := chi.RouteContext(r.Context()); rctx != nil && route == "" {
				route = rctx.RoutePattern()
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK // nothing written: net/http answers 200
			}
			entry := migration.AuditEntry{At: time.Now(), Actor: note.actor, Remote: remoteHost(r), Method: r.Method, Route: route,
				What: routeSummary(r.Method, route), Path: r.URL.Path, Status: status, RequestID: middleware.GetReqID(r.Context())}
			if err := queue.record(r.Context(), entry); err != nil {
				logger.ErrorContext(r.Context(), "could not record a request in the audit trail", "err", err,
					"method", r.Method, "path", r.URL.Path, "status", status, "request_id", entry.RequestID)
			}
		})
	}
}

// audited reports whether r goes into the trail: the API's requests that
// change something (POST, PUT, PATCH, DELETE), the sign-in callback,
// which stores an account's token, and the console's sign-ins and
// sign-outs.
func audited(r *http.Request) bool {
	path := routingPath(r)
	if path == CallbackPath || path == SignInPath || path == SignOutPath {
		return true
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return isAPIPath(path)
	}
	return false
}

// remoteHost is the client's address, without its port.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// routeSummaries map "METHOD /api/v1/route" to the route's summary in
// the OpenAPI file: what the trail says a request asked for.
var routeSummaries = sync.OnceValue(func() map[string]string {
	summaries := map[string]string{
		http.MethodGet + " " + CallbackPath: "Store an account's token after its sign-in at the provider.",
		http.MethodPost + " " + SignInPath:  "Sign in to the console with a name and a password.",
		http.MethodPost + " " + SignOutPath: "Sign out of the console.",
	}
	for route, op := range apiOperations() {
		summaries[route] = op.summary
	}
	return summaries
})

// routeSummary is the summary of the route method and route name, "" for
// none.
func routeSummary(method, route string) string {
	return routeSummaries()[strings.ToUpper(method)+" "+route]
}

// ListAudit answers GET /audit.
func (s *Server) ListAudit(ctx context.Context, req api.ListAuditRequestObject) (api.ListAuditResponseObject, error) {
	var before int64
	if req.Params.Before != nil {
		before = *req.Params.Before
	}
	limit := 0
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	entries, err := s.service.AuditLog(ctx, before, limit)
	if err != nil {
		return nil, err
	}
	out := make(api.ListAudit200JSONResponse, len(entries))
	for i, e := range entries {
		out[i] = api.AuditEntry{Id: e.ID, At: e.At, Actor: e.Actor, Remote: e.Remote, Method: e.Method, Route: e.Route,
			What: e.What, Path: e.Path, Status: e.Status, Outcome: e.Outcome(), RequestId: e.RequestID}
	}
	return out, nil
}

// GetAuditCSV answers GET /audit.csv.
func (s *Server) GetAuditCSV(ctx context.Context, _ api.GetAuditCSVRequestObject) (api.GetAuditCSVResponseObject, error) {
	var trail bytes.Buffer
	if err := s.service.WriteAuditCSV(ctx, &trail); err != nil {
		return nil, err
	}
	disposition := `attachment; filename="audit.csv"`
	return api.GetAuditCSV200TextcsvResponse{Body: &trail, ContentLength: int64(trail.Len()),
		Headers: api.GetAuditCSV200ResponseHeaders{ContentDisposition: &disposition}}, nil
}
