package httpapi_test

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/websocket"

	apispec "github.com/mailmigrate/mailmigrate/api"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
)

const testToken = "s3cret-token-0123456789abcdef"

// specRoute is one operation of api/openapi.yaml, its path parameters
// filled in.
type specRoute struct {
	method, path string
}

func (r specRoute) String() string { return r.method + " " + r.path }

// specRoutes lists every operation the OpenAPI file declares, so that a
// route added there is covered here without a change to this test.
func specRoutes(t *testing.T) []specRoute {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(apispec.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	// The spec tells clients (Swagger UI, the generated client) about the
	// token: a bearer scheme required globally, and the 401 of each operation.
	scheme := doc.Components.SecuritySchemes["bearerToken"]
	if scheme == nil || scheme.Value.Type != "http" || scheme.Value.Scheme != "bearer" || len(doc.Security) != 1 || doc.Security[0]["bearerToken"] == nil {
		t.Error("the OpenAPI file does not require the bearerToken http bearer scheme globally")
	}
	fill := strings.NewReplacer("{id}", "1", "{accountId}", "1")
	var routes []specRoute
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			routes = append(routes, specRoute{method: method, path: fill.Replace(path)})
			if op.Responses.Value("401") == nil || op.Security != nil {
				t.Errorf("%s %s: documents no 401, or overrides the global security", method, path)
			}
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].String() < routes[j].String() })
	if len(routes) < 20 {
		t.Fatalf("found %d operations in the OpenAPI file; the parse is wrong", len(routes))
	}
	return routes
}

// rawRequest sends method url with the given Authorization header (none
// when empty) and returns the response with its body read.
func rawRequest(t *testing.T, method, url, authorization string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return send(t, req)
}

func TestEveryAPIRouteNeedsTheToken(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{APIToken: testToken})
	open := newTestService(t)
	for _, route := range specRoutes(t) {
		for _, tc := range []struct{ name, authorization, challenge string }{
			{"no token", "", `Bearer realm="mailmigrate"`},
			{"wrong token", "Bearer " + testToken + "x", `Bearer realm="mailmigrate", error="invalid_token"`},
			{"token as another scheme", "Basic " + testToken, `Bearer realm="mailmigrate"`},
			{"a prefix of the token", "Bearer " + testToken[:len(testToken)-1], `Bearer realm="mailmigrate", error="invalid_token"`},
		} {
			got := rawRequest(t, route.method, s.api+route.path, tc.authorization)
			if got.status != http.StatusUnauthorized || got.body != "unauthorized" || got.contentType != "text/plain; charset=utf-8" {
				t.Errorf("%s, %s: %d %q %q, want 401 unauthorized as plain text", route, tc.name, got.status, got.contentType, got.body)
			}
			if h := got.header.Get("WWW-Authenticate"); h != tc.challenge {
				t.Errorf("%s, %s: WWW-Authenticate %q, want %q", route, tc.name, h, tc.challenge)
			}
		}
		// With the token, the request gets exactly what it gets from a
		// service that requires none (on an empty database: mostly 404 or
		// 400, the same status and body).
		got := rawRequest(t, route.method, s.api+route.path, "Bearer "+testToken)
		want := rawRequest(t, route.method, open.api+route.path, "")
		// The audit trail and /me differ by nature: they name who asked.
		sameBody := got.body == want.body || strings.HasPrefix(route.path, "/audit") || route.path == "/me"
		if got.status != want.status || !sameBody || got.status == http.StatusUnauthorized {
			t.Errorf("%s with the token: %d %.200q; without authentication configured: %d %.200q", route, got.status, got.body, want.status, want.body)
		}
		// The scheme is case-insensitive (RFC 9110 §11.1).
		if got := rawRequest(t, route.method, s.api+route.path, "bearer "+testToken); got.status == http.StatusUnauthorized {
			t.Errorf("%s with `bearer`: 401", route)
		}
	}
	// The token works end to end through the generated client.
	if id := s.createEndpoint(t, oldServer); id <= 0 {
		t.Errorf("created endpoint %d", id)
	}
	resp, err := s.client.ListEndpointsWithResponse(t.Context())
	if err != nil || resp.StatusCode() != http.StatusOK || len(*resp.JSON200) != 1 {
		t.Errorf("list with the token: %v %v", err, resp.Status())
	}
}

func TestTheAccessTokenParameterOpensOnlyTheEventStream(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{APIToken: testToken})
	got := rawRequest(t, "GET", s.api+"/endpoints?access_token="+testToken, "")
	if got.status != http.StatusUnauthorized {
		t.Errorf("GET /endpoints?access_token=: %d, want 401: a URL is logged and kept in histories", got.status)
	}
}

func TestUnknownAndOddlyEncodedAPIPathsNeedTheToken(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{APIToken: testToken})
	s.createEndpoint(t, oldServer)
	for _, path := range []string{"/api/v1/nope", "/api/v1", "/api/v1/", "/api/v1/%65ndpoints", "/api/v1/endpoints/"} {
		if got := rawRequest(t, "GET", s.url+path, ""); got.status != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d %q, want 401", path, got.status, got.body)
		}
	}
	// Whatever path chi does not route to an API handler may pass, but
	// must not answer with data.
	for _, path := range []string{"/api%2Fv1/endpoints", "//api/v1/endpoints", "/API/v1/endpoints", "/api/v1/./endpoints"} {
		got := rawRequest(t, "GET", s.url+path, "")
		if got.status == http.StatusOK || strings.Contains(got.body, "imap.old.example") {
			t.Errorf("GET %s without the token: %d %q", path, got.status, got.body)
		}
	}
}

func TestOpenRoutesNeedNoToken(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{APIToken: testToken})
	for path, want := range map[string]int{
		"/healthz":                  http.StatusOK,
		"/readyz":                   http.StatusOK,
		"/docs/":                    http.StatusOK,
		"/docs/swagger-ui.css":      http.StatusOK,
		"/api/v1/openapi.yaml":      http.StatusOK,
		"/":                         http.StatusOK, // the front end asks for the token itself
		"/assets/app.js":            http.StatusOK,
		"/metrics":                  http.StatusOK,
		"/docs/mailmigrate-docs.js": http.StatusOK,
		// A provider's redirect carries no token; the state is what
		// counts, and this one names no authorization.
		"/oauth/callback?state=unknown&code=x": http.StatusBadRequest,
	} {
		if got := rawRequest(t, "GET", s.url+path, ""); got.status != want {
			t.Errorf("GET %s without a token: %d, want %d", path, got.status, want)
		}
	}
}

func TestWithoutATokenTheAPIIsOpen(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	if got := rawRequest(t, "GET", s.api+"/endpoints", ""); got.status != http.StatusOK {
		t.Errorf("GET /endpoints with no token configured: %d %q", got.status, got.body)
	}
}

// dialWith opens the event stream with the given header and query.
func (s *testService) dialWith(t *testing.T, query string, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(s.api, "http") + "/events/ws" + query
	conn, resp, err := websocket.DefaultDialer.Dial(u, header)
	if conn != nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, resp, err
}

func TestEventStreamNeedsTheToken(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{APIToken: testToken})
	refused := map[string]struct {
		query  string
		header http.Header
	}{
		"no token":               {"", nil},
		"wrong header":           {"", http.Header{"Authorization": {"Bearer nope"}}},
		"wrong access_token":     {"?access_token=nope", nil},
		"wrong subprotocol":      {"", http.Header{"Sec-WebSocket-Protocol": {"bearer, nope"}}},
		"bearer without token":   {"", http.Header{"Sec-WebSocket-Protocol": {"bearer"}}},
		"token not after bearer": {"", http.Header{"Sec-WebSocket-Protocol": {testToken + ", bearer"}}},
	}
	for name, tc := range refused {
		_, resp, err := s.dialWith(t, tc.query, tc.header)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: dial succeeded or did not answer 401: %v %v", name, err, resp)
		}
	}
	accepted := map[string]struct {
		query        string
		header       http.Header
		wantProtocol string
	}{
		"header":       {"", http.Header{"Authorization": {"Bearer " + testToken}}, ""},
		"access_token": {"?after=0&access_token=" + url.QueryEscape(testToken), nil, ""},
		"subprotocol":  {"", http.Header{"Sec-WebSocket-Protocol": {"bearer, " + testToken}}, "bearer"},
	}
	for name, tc := range accepted {
		conn, resp, err := s.dialWith(t, tc.query, tc.header)
		if err != nil {
			t.Errorf("%s: %v %v", name, err, resp)
			continue
		}
		// The server names the subprotocol alone, never the token.
		if got := resp.Header.Values("Sec-WebSocket-Protocol"); strings.Join(got, ",") != tc.wantProtocol || conn.Subprotocol() != tc.wantProtocol {
			t.Errorf("%s: server chose subprotocol %q, want %q", name, got, tc.wantProtocol)
		}
	}
	// The stream works with the token: a stored event arrives.
	taskID, _, _ := s.newTask(t)
	s.appendEvent(t, taskID, "hello")
	conn, _, err := s.dialWith(t, "?access_token="+testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := messages(nextEvents(t, conn, 1)); got != "hello" {
		t.Errorf("event %q, want hello", got)
	}
}

func TestTheTokenIsNeverLogged(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{APIToken: testToken})
	rawRequest(t, "GET", s.api+"/endpoints", "Bearer "+testToken)
	rawRequest(t, "GET", s.api+"/endpoints", "Bearer "+testToken+"x")
	conn, _, err := s.dialWith(t, "?access_token="+testToken+"&task_id=x", nil)
	if err == nil {
		conn.Close()
	}
	conn, _, err = s.dialWith(t, "?access_token="+testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	s.dialWith(t, "", http.Header{"Sec-WebSocket-Protocol": {"bearer, " + testToken}}) //nolint:errcheck // only the log matters
	logs := s.logs.String()
	if !strings.Contains(logs, "msg=request") {
		t.Fatalf("nothing was logged, so nothing was checked:\n%s", logs)
	}
	if strings.Contains(logs, testToken) {
		t.Errorf("the token is in the log:\n%s", logs)
	}
}
