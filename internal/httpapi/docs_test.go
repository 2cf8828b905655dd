package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestServesTheOpenAPIFileAsWritten(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	resp, body := get(t, s.api+"/openapi.yaml")
	want, err := os.ReadFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal([]byte(body), want) {
		t.Errorf("GET /api/v1/openapi.yaml: %d, %d bytes; want the %d bytes of api/openapi.yaml", resp.StatusCode, len(body), len(want))
	}
}

func TestSwaggerUIIsServedFromTheBinary(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	resp, page := get(t, s.url+"/docs/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "/api/v1/openapi.yaml") {
		t.Fatalf("GET /docs/: %d, page does not point at the spec:\n%.500s", resp.StatusCode, page)
	}
	if strings.Contains(page, "cdn") || strings.Contains(page, "unpkg") {
		t.Errorf("Swagger UI page loads assets from the Internet:\n%s", page)
	}
	for _, asset := range []string{"swagger-ui-bundle.js", "swagger-ui.css"} {
		if !strings.Contains(page, "/docs/"+asset) {
			t.Errorf("page does not load %s from /docs/", asset)
		}
		resp, body := get(t, s.url+"/docs/"+asset)
		if resp.StatusCode != http.StatusOK || len(body) < 1000 {
			t.Errorf("GET /docs/%s: %d, %d bytes", asset, resp.StatusCode, len(body))
		}
	}
	resp, _ = get(t, s.url+"/docs")
	if resp.Request.URL.Path != "/docs/" {
		t.Errorf("/docs ended at %s, want a redirect to /docs/", resp.Request.URL.Path)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	if resp, body := get(t, s.url+"/healthz"); resp.StatusCode != http.StatusOK || body != "ok" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, body)
	}
	if resp, body := get(t, s.url+"/readyz"); resp.StatusCode != http.StatusOK || body != "ready" {
		t.Errorf("/readyz: %d %q", resp.StatusCode, body)
	}
	// A database whose schema is behind is not ready.
	if _, err := s.pool.Exec(t.Context(), "DELETE FROM schema_migrations"); err != nil {
		t.Fatal(err)
	}
	if resp, body := get(t, s.url+"/readyz"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz with an unmigrated schema: %d %q, want 503", resp.StatusCode, body)
	}
	// An unreachable database is not ready either; health stays up.
	s.pool.Close()
	if resp, body := get(t, s.url+"/readyz"); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "closed pool") {
		t.Errorf("/readyz with the database gone: %d %q, want 503 naming the cause", resp.StatusCode, body)
	}
	if resp, _ := get(t, s.url+"/healthz"); resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the database gone: %d", resp.StatusCode)
	}
}

func TestUnknownRoutesArePlainText404(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	wantText(t, s.do(t, "GET", "/nope", ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "PATCH", "/endpoints", ""), http.StatusMethodNotAllowed, "method not allowed")
}

func TestResponsesCarryARequestID(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	resp, _ := get(t, s.api+"/endpoints")
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id header")
	}
}
