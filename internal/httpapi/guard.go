package httpapi

import (
	"net"
	"net/http"
	"strings"
)

// Browsers are the service's risk even on loopback: any page its operator
// visits can send it requests. Two guards stand between those pages and
// the API, whatever the authentication:
//
//   - the Host allow-list defeats DNS rebinding, where a page of
//     evil.example has its name resolve to the service's address and so
//     becomes same-origin with it: such a request names evil.example in
//     Host, which no operator allowed;
//   - the cross-origin check refuses a state-changing request that a
//     browser says came from another site (Sec-Fetch-Site, else Origin
//     against Host), such as a form's text/plain POST.
//
// docs/security.md tells the threat model these serve.

// bodyHostNotAllowed is the plain-text body of a request to a host name
// the service was not told to answer to.
const bodyHostNotAllowed = "host not allowed: add the name this service is reached by to --allowed-hosts (MAILMIGRATE_ALLOWED_HOSTS)"

// bodyCrossOrigin answers a browser's state-changing request from another site.
const bodyCrossOrigin = "cross-origin request refused: use the console this service serves, or a client that is not a browser"

// openPaths answer whatever the Host: probes and scrapers reach the
// service by names nobody lists, and these hold no data.
var openPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// allowHosts answers 403 to a request whose Host is a name outside
// allowed. An IP address is always allowed, since rebinding needs a name
// (a page at http://127.0.0.1 is the service's own origin), and so are
// localhost and its subdomains (RFC 6761 §6.3: they never leave the
// machine). "*" in allowed allows every name.
func allowHosts(allowed []string) func(http.Handler) http.Handler {
	names := map[string]bool{}
	for _, name := range allowed {
		names[normalHost(name)] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if openPaths[r.URL.Path] || hostAllowed(r.Host, names) {
				next.ServeHTTP(w, r)
				return
			}
			writeText(w, http.StatusForbidden, bodyHostNotAllowed)
		})
	}
}

func hostAllowed(hostport string, names map[string]bool) bool {
	host := normalHost(hostport)
	switch {
	case host == "":
		return false
	case net.ParseIP(host) != nil:
		return true
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return true
	}
	return names["*"] || names[host]
}

// normalHost is the host of a Host header or a configured name: without
// its port, brackets and final dot, in lower case.
func normalHost(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return strings.ToLower(host)
}

// refuseCrossOrigin answers 403 to a state-changing request a browser made
// for a page of another origin. Requests that no browser sent (curl, the
// CLI: neither Sec-Fetch-Site nor Origin) and safe methods pass; the event
// stream's handshake is checked by the WebSocket upgrader's own Origin
// check.
func refuseCrossOrigin(next http.Handler) http.Handler {
	protection := http.NewCrossOriginProtection()
	protection.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusForbidden, bodyCrossOrigin)
	}))
	return protection.Handler(next)
}
