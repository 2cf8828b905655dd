package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	apispec "github.com/mailmigrate/mailmigrate/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// Roles (docs/security.md#users-and-roles): every operation in the
// OpenAPI file names the least role that may call it (x-role), and
// requireRole refuses, before the handler runs, a principal whose role
// does not cover it.

// roleExtension is the OpenAPI extension that carries an operation's role.
const roleExtension = "x-role"

// apiOperation is what the service reads of an operation in the OpenAPI
// file.
type apiOperation struct {
	id, summary string
	// role is the least role that may call it; "" when the file names
	// none (TestEveryOperationHasARole fails then, and requireRole
	// refuses it to all but admins).
	role migration.Role
}

// apiOperations map "METHOD /api/v1/route" to the operation in the
// OpenAPI file.
var apiOperations = sync.OnceValue(func() map[string]apiOperation {
	operations := map[string]apiOperation{}
	doc, err := openapi3.NewLoader().LoadFromData(apispec.OpenAPIYAML)
	if err != nil {
		return operations // the file is embedded and tested: this does not happen
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			role, _ := op.Extensions[roleExtension].(string)
			operations[method+" "+BasePath+path] = apiOperation{id: op.OperationID, summary: op.Summary, role: migration.Role(role)}
		}
	}
	return operations
})

type principalKey struct{}

// withPrincipal is ctx carrying whose token let its request in.
func withPrincipal(ctx context.Context, p migration.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalOf is whose token let ctx's request in; false when the
// service asks for no token (--insecure-no-auth), where anyone may do
// anything.
func principalOf(ctx context.Context) (migration.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(migration.Principal)
	return p, ok
}

// requireRole answers 403 to a request for an API operation whose role
// the principal's does not cover. It finds the operation as routes will
// route the request, before anything of it is read; a request that
// reaches no operation goes on to its 404 or 405.
func requireRole(routes chi.Routes) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			principal, ok := principalOf(r.Context())
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			method := r.Method
			if method == http.MethodHead {
				method = http.MethodGet // answered by the GET handler (middleware.GetHead)
			}
			route := routes.Find(chi.NewRouteContext(), method, routingPath(r))
			op, found := apiOperations()[method+" "+route]
			if !found {
				next.ServeHTTP(w, r)
				return
			}
			need := op.role
			if need == "" {
				need = migration.RoleAdmin // an operation without a decision is an admin's
			}
			if err := principal.Authorize(need); err != nil {
				noteRoute(r, route)
				writeText(w, http.StatusForbidden, err.Error())
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
