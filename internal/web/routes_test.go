package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestRoutes checks how the whole service answers around the page: the
// page and its files where they belong, the API's plain-text 404 anywhere
// else, and the other routes as they were.
func TestRoutes(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	for _, tc := range []struct {
		path, status, contentType, bodyHas string
	}{
		{"/", "200", "text/html; charset=utf-8", `<script type="module" src="/assets/app.js">`},
		{"/assets/app.js", "200", "text/javascript; charset=utf-8", "import"},
		{"/assets/style.css", "200", "text/css; charset=utf-8", ":root"},
		{"/assets/index.html", "404", "text/plain; charset=utf-8", "not found"},
		{"/assets/", "404", "text/plain; charset=utf-8", "not found"},
		{"/assets/nope.js", "404", "text/plain; charset=utf-8", "not found"},
		{"/assets/../go.mod", "404", "text/plain; charset=utf-8", "not found"},
		{"/index.html", "404", "text/plain; charset=utf-8", "not found"},
		{"/nope", "404", "text/plain; charset=utf-8", "not found"},
		{"/api/v1/nope", "404", "text/plain; charset=utf-8", "not found"},
		{"/api/v1/endpoints", "200", "application/json", "[]"},
		{"/healthz", "200", "", ""},
		{"/docs/", "200", "text/html", "swagger"},
	} {
		resp, err := http.Get(s.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status := strings.Fields(resp.Status)[0]
		if status != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.contentType) || !strings.Contains(string(body), tc.bodyHas) {
			t.Errorf("GET %s: %s %q %.80q, want %s %q containing %q", tc.path, resp.Status, resp.Header.Get("Content-Type"), body, tc.status, tc.contentType, tc.bodyHas)
		}
		if tc.status == "404" && string(body) != "not found" {
			t.Errorf("GET %s: body %q, want the API's plain %q", tc.path, body, "not found")
		}
	}
}
