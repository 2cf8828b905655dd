package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	apispec "github.com/mailmigrate/mailmigrate/api"
	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// specOperation is an operation of the OpenAPI file with its role.
type specOperation struct {
	method, path, id string
	role             migration.Role
}

// specOperations lists every operation the OpenAPI file declares, with
// the role it names (x-role), so that an operation added there is in the
// role matrix without a change to this test.
func specOperations(t *testing.T) []specOperation {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(apispec.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	var ops []specOperation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			role, _ := op.Extensions["x-role"].(string)
			ops = append(ops, specOperation{method: method, path: path, id: op.OperationID, role: migration.Role(role)})
			if op.Responses.Value("403") == nil {
				t.Errorf("%s %s documents no 403", method, path)
			}
		}
	}
	slices.SortFunc(ops, func(a, b specOperation) int { return strings.Compare(a.method+a.path, b.method+b.path) })
	if len(ops) < 50 {
		t.Fatalf("found %d operations in the OpenAPI file; the parse is wrong", len(ops))
	}
	return ops
}

// userToken makes a user of role and returns its first token.
func (s *testService) userToken(t *testing.T, name string, role migration.Role) string {
	t.Helper()
	_, token, err := s.process.Service.CreateUser(t.Context(), migration.UserInput{Name: name, Role: role}, migration.TokenInput{Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	return token.Secret
}

// TestRoleMatrix: every operation names its role, and a token of each
// role is refused (403, in words) exactly the operations its role does
// not cover, before anything else is looked at; the others get their
// usual answer (here, on an empty database, mostly 404 or 400).
func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	s := newTestServiceConfig(t, app.Config{DatabaseTokens: true})
	tokens := map[migration.Role]string{}
	for _, role := range migration.Roles {
		tokens[role] = s.userToken(t, string(role)+"@example.com", role)
	}
	// Ids no row has: an admin's DELETE /users/{id} must not delete the
	// test's own users.
	fill := strings.NewReplacer("{id}", "987654", "{accountId}", "987654")
	for _, op := range specOperations(t) {
		if !slices.Contains(migration.Roles, op.role) {
			t.Errorf("%s (%s %s) has no role decision: give it x-role: viewer, operator or admin", op.id, op.method, op.path)
			continue
		}
		for _, role := range migration.Roles {
			got := rawRequest(t, op.method, s.api+fill.Replace(op.path), "Bearer "+tokens[role])
			want := !role.Covers(op.role)
			if forbidden := got.status == http.StatusForbidden; forbidden != want {
				t.Errorf("%s as %s: %d %.120q, want forbidden %v", op.id, role, got.status, got.body, want)
			}
			if want && !strings.HasPrefix(got.body, fmt.Sprintf("forbidden: this needs the %s role; %s@example.com (%s)", op.role, role, role)) {
				t.Errorf("%s as %s: %q does not say which role it needs and whose token it was", op.id, role, got.body)
			}
			if got.status == http.StatusUnauthorized {
				t.Errorf("%s as %s: 401", op.id, role)
			}
		}
	}
}

// TestRoleDecisions: the roles are what docs/security.md promises. A
// viewer changes nothing but its own tokens; endpoints, users and the
// check of a server not saved are an admin's.
func TestRoleDecisions(t *testing.T) {
	t.Parallel()
	viewerChanges := []string{"createToken", "revokeToken", "setUserPassword"}
	adminOnly := []string{"createEndpoint", "updateEndpoint", "deleteEndpoint", "checkEndpointInput", "listUsers", "createUser", "deleteUser"}
	for _, op := range specOperations(t) {
		switch {
		case slices.Contains(adminOnly, op.id):
			if op.role != migration.RoleAdmin {
				t.Errorf("%s is %s's, want admin's", op.id, op.role)
			}
		case op.method != http.MethodGet && op.role == migration.RoleViewer && !slices.Contains(viewerChanges, op.id):
			t.Errorf("%s %s changes something and is a viewer's", op.method, op.path)
		case op.method == http.MethodGet && op.role != migration.RoleViewer:
			t.Errorf("%s reads, and is not a viewer's but %s's", op.id, op.role)
		}
	}
}

// TestPersonalTokens: an admin adds a user, whose first token comes back
// once; the user sees who they are, makes a token of their own that
// expires, lists their tokens without secrets, and revokes one, which
// stops at once. A viewer's change is refused in words and recorded in
// the audit trail by name and role. A deleted user's tokens stop.
func TestPersonalTokens(t *testing.T) {
	t.Parallel()
	s := newTestServiceConfig(t, app.Config{DatabaseTokens: true})
	admin := s.userToken(t, "root@example.com", migration.RoleAdmin)
	as := func(token, method, path, body string) reply {
		t.Helper()
		return s.doAs(t, token, method, path, body)
	}
	created := as(admin, "POST", "/users", `{"name": "ann@example.com", "role": "operator", "token_name": "handed over"}`)
	if created.status != http.StatusCreated {
		t.Fatalf("create user: %d %s", created.status, created.body)
	}
	var newUser struct {
		User struct {
			ID int64 `json:"id"`
		} `json:"user"`
		Token struct {
			Secret    string    `json:"secret"`
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"token"`
	}
	if err := json.Unmarshal([]byte(created.body), &newUser); err != nil || !strings.HasPrefix(newUser.Token.Secret, "mmt_") {
		t.Fatalf("new user %s: %v", created.body, err)
	}
	if left := time.Until(newUser.Token.ExpiresAt); left < 89*24*time.Hour || left > 91*24*time.Hour {
		t.Errorf("the first token expires in %s, want 90 days", left)
	}
	ann := newUser.Token.Secret
	if got := as(admin, "POST", "/users", `{"name": "ann@example.com", "role": "viewer"}`); got.status != http.StatusConflict {
		t.Errorf("a second ann: %d %s", got.status, got.body)
	}
	for _, bad := range []string{`{"name": "", "role": "viewer"}`, `{"name": "x", "role": "root"}`, `{"name": "x", "role": "viewer", "expires_in_days": 400}`} {
		if got := as(admin, "POST", "/users", bad); got.status != http.StatusBadRequest {
			t.Errorf("create %s: %d %s, want 400", bad, got.status, got.body)
		}
	}
	me := as(ann, "GET", "/me", "")
	if me.status != http.StatusOK || !strings.Contains(me.body, `"role":"operator"`) || !strings.Contains(me.body, "ann@example.com (operator)") {
		t.Errorf("ann's /me: %d %s", me.status, me.body)
	}
	laptop := as(ann, "POST", "/tokens", `{"name": "laptop", "expires_in_days": 7}`)
	var token struct {
		ID        int64     `json:"id"`
		Secret    string    `json:"secret"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal([]byte(laptop.body), &token); laptop.status != http.StatusCreated || err != nil {
		t.Fatalf("ann's laptop token: %d %s", laptop.status, laptop.body)
	}
	if left := time.Until(token.ExpiresAt); left < 6*24*time.Hour || left > 8*24*time.Hour {
		t.Errorf("the laptop token expires in %s, want 7 days", left)
	}
	if got := as(token.Secret, "POST", "/tasks/987654/run", ""); got.status != http.StatusNotFound {
		t.Errorf("the operator's new token runs a task: %d %s, want 404 (no such task)", got.status, got.body)
	}
	listed := as(ann, "GET", "/tokens", "")
	if listed.status != http.StatusOK || strings.Count(listed.body, `"id"`) != 2 || strings.Contains(listed.body, "mmt_") ||
		strings.Contains(listed.body, "root@example.com") {
		t.Errorf("ann's tokens: %d %s; want her two, without secrets", listed.status, listed.body)
	}
	if all := as(admin, "GET", "/tokens", ""); strings.Count(all.body, `"id"`) != 3 {
		t.Errorf("the admin's list: %s; want everyone's three", all.body)
	}
	if got := as(ann, "DELETE", fmt.Sprintf("/tokens/%d", token.ID), ""); got.status != http.StatusNoContent {
		t.Errorf("revoke: %d %s", got.status, got.body)
	}
	if got := as(token.Secret, "GET", "/me", ""); got.status != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d, want 401 at once", got.status)
	}

	viewer := s.userToken(t, "help-desk@example.com", migration.RoleViewer)
	refused := as(viewer, "DELETE", "/tasks/1", "")
	if refused.status != http.StatusForbidden || refused.body != "forbidden: this needs the operator role; help-desk@example.com (viewer), API token 4: first is a viewer" {
		t.Errorf("a viewer deletes a task: %d %q", refused.status, refused.body)
	}
	if got := as(viewer, "DELETE", fmt.Sprintf("/tokens/%d", token.ID-1), ""); got.status != http.StatusNotFound {
		t.Errorf("a viewer revokes ann's token: %d %s, want 404", got.status, got.body)
	}
	if got := as(viewer, "GET", "/tasks", ""); got.status != http.StatusOK {
		t.Errorf("a viewer lists tasks: %d %s", got.status, got.body)
	}
	trail := as(admin, "GET", "/audit", "")
	if !strings.Contains(trail.body, `"actor":"help-desk@example.com (viewer), API token 4: first"`) || !strings.Contains(trail.body, `"status":403`) || !strings.Contains(trail.body, `"route":"/api/v1/tasks/{id}"`) {
		t.Errorf("the trail does not name the viewer's refused delete: %.600s", trail.body)
	}

	if got := as(admin, "DELETE", fmt.Sprintf("/users/%d", newUser.User.ID), ""); got.status != http.StatusNoContent {
		t.Errorf("delete ann: %d %s", got.status, got.body)
	}
	if got := as(ann, "GET", "/me", ""); got.status != http.StatusUnauthorized {
		t.Errorf("a deleted user's token: %d, want 401", got.status)
	}
}
