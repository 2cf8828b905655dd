package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/httpapi"
)

// TestHostAllowList: a request naming a host in Host is answered when the
// name is an IP address, localhost (or under it), or allowed by the
// operator; any other name is a DNS-rebound page's and gets 403. Probes
// answer whatever the name.
func TestHostAllowList(t *testing.T) {
	t.Parallel()
	handler := httpapi.NewHandler(httpapi.Options{AllowedHosts: []string{"Migrate.Example.com.", " "}})
	any := httpapi.NewHandler(httpapi.Options{AllowedHosts: []string{"*"}})
	for _, tc := range []struct {
		host, path string
		handler    http.Handler
		want       int
	}{
		{"127.0.0.1:8080", "/api/v1/openapi.yaml", handler, 200},
		{"[::1]:8080", "/api/v1/openapi.yaml", handler, 200},
		{"192.0.2.7", "/api/v1/openapi.yaml", handler, 200},
		{"localhost:8080", "/", handler, 200},
		{"console.localhost", "/", handler, 200},
		{"migrate.example.com:443", "/", handler, 200},
		{"MIGRATE.example.com.", "/", handler, 200},
		{"evil.example:8080", "/", handler, 403},
		{"evil.example:8080", "/api/v1/openapi.yaml", handler, 403},
		{"localhost.evil.example", "/", handler, 403},
		{"example.com", "/docs/", handler, 403},
		{"", "/", handler, 403},
		{"evil.example", "/healthz", handler, 200},
		{"evil.example", "/", any, 200},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Host = tc.host
		rec := httptest.NewRecorder()
		tc.handler.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("GET %s with Host %q: %d %q, want %d", tc.path, tc.host, rec.Code, rec.Body, tc.want)
		}
	}
}
