package httpapi_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	for path, wantCSP := range map[string]string{
		"/api/v1/endpoints":    "default-src 'none'",
		"/api/v1/nope":         "default-src 'none'",
		"/api/v1/openapi.yaml": "default-src 'none'",
		"/docs/":               "script-src 'self';",
		"/docs/swagger-ui.css": "script-src 'self';",
		"/healthz":             "script-src 'self';",
		"/":                    "script-src 'self';",
	} {
		resp, _ := get(t, s.url+path)
		h := resp.Header
		for name, want := range map[string]string{
			"X-Content-Type-Options": "nosniff",
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "no-referrer",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("%s: %s %q, want %q", path, name, got, want)
			}
		}
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, wantCSP) || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: Content-Security-Policy %q, want %q and frame-ancestors 'none'", path, csp, wantCSP)
		}
		if scripts := regexp.MustCompile(`script-src [^;]*`).FindString(csp); strings.Contains(scripts, "unsafe-inline") {
			t.Errorf("%s: inline script allowed: %q", path, csp)
		}
	}
}

// TestDocsPageHasNoInlineScript: under its policy, Swagger UI runs only if
// every script of its page is a file.
func TestDocsPageHasNoInlineScript(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	_, page := get(t, s.url+"/docs/")
	scripts := regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1)
	if len(scripts) < 3 {
		t.Fatalf("page has %d scripts, want Swagger UI's two and its start-up:\n%s", len(scripts), page)
	}
	for _, tag := range scripts {
		if !strings.Contains(tag, ` src="/docs/`) {
			t.Errorf("inline or foreign script %s", tag)
		}
		src := regexp.MustCompile(`src="([^"]+)"`).FindStringSubmatch(tag)[1]
		if resp, body := get(t, s.url+src); resp.StatusCode != http.StatusOK || len(body) < 100 {
			t.Errorf("GET %s: %d, %d bytes", src, resp.StatusCode, len(body))
		}
	}
	if regexp.MustCompile(`<style|\son[a-z]+=`).MatchString(page) {
		t.Errorf("page has inline style or event handlers:\n%s", page)
	}
}

// TestNoCORSHeaders: the front end is served from the service's own
// origin, so no page elsewhere is allowed to read the API.
func TestNoCORSHeaders(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	for _, method := range []string{"GET", "OPTIONS"} {
		req, _ := http.NewRequest(method, s.api+"/endpoints", nil)
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for name := range resp.Header {
			if strings.HasPrefix(name, "Access-Control-") {
				t.Errorf("%s with an Origin: %s: %q", method, name, resp.Header.Get(name))
			}
		}
	}
}
