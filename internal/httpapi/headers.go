package httpapi

import (
	"net/http"
)

// Content-Security-Policies. None allows inline script: every script is a
// file served by the binary, so injected markup cannot run code.
const (
	// cspPages covers the browser front end at /, Swagger UI at /docs/
	// (its page starts it from a file, see docsPage; checked rendering
	// in Chromium under this policy) and anything else outside the API.
	cspPages = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	// cspAPI: an API response opened in a browser loads and runs nothing.
	cspAPI = "default-src 'none'; frame-ancestors 'none'"
)

// securityHeaders sets the headers every response carries: no MIME
// sniffing (a JSON or text body is never run as script or HTML), no
// framing (clickjacking), no Referer leaving the service, and the
// Content-Security-Policy of the route's kind. No CORS header is ever
// sent: the front end is served from the same origin, so browsers keep
// other sites' pages from reading the API.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", policyFor(routingPath(r)))
		next.ServeHTTP(w, r)
	})
}

func policyFor(path string) string {
	switch {
	case isAPIPath(path):
		return cspAPI
	default:
		return cspPages
	}
}
