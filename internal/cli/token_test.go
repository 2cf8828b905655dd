package cli_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestTokenIsSentOnEveryRequest puts a gate that wants a bearer token in
// front of the service: with the token from the environment every
// request, the WebSocket handshake included, passes; with a wrong one the
// gate's 401 text is the error.
func TestTokenIsSentOnEveryRequest(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	gate := startTokenGate(t, svc.URL, "s3cret-token")
	u := newUser(t, svc)
	u.env["MAILMIGRATE_URL"] = gate.server.URL
	u.env["MAILMIGRATE_API_TOKEN"] = "s3cret-token"

	// An endpoint nobody listens on: the login test fails at once.
	ep := u.id("endpoints", "create", "--host", "127.0.0.1", "--port", "1", "--tls-mode", "plain")
	task := u.id("tasks", "create", "--source", ep, "--destination", u.id("endpoints", "create", "--host", "127.0.0.1", "--port", "1", "--tls-mode", "plain"))
	u.env["MAILMIGRATE_SOURCE_PASSWORD"] = "pw"
	u.id("accounts", "create", task, "--source-login", "alice")
	if got := u.run("tasks", "test", task, "--follow"); got.code != 1 || !strings.Contains(got.stdout, "test.failed") {
		t.Errorf("tasks test --follow: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
	if refused, streams := gate.counts(); refused != 0 || streams == 0 {
		t.Errorf("gate refused %d requests and passed %d event streams; want 0 and some", refused, streams)
	}

	u.env["MAILMIGRATE_API_TOKEN"] = "wrong"
	if got := u.run("tasks", "list"); got.code != 1 || !strings.HasPrefix(got.stderr, "mailmigrate: unauthorized: give the API token in MAILMIGRATE_API_TOKEN") {
		t.Errorf("wrong token: exit %d, stderr %q", got.code, got.stderr)
	}

	// Without a token given, the CLI takes the one a service on this
	// machine keeps in its data dir, for a service at a loopback address.
	delete(u.env, "MAILMIGRATE_API_TOKEN")
	u.localTokenFile = filepath.Join(t.TempDir(), "api-token")
	if err := os.WriteFile(u.localTokenFile, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := u.run("tasks", "list"); got.code != 0 {
		t.Errorf("with the data dir's token: exit %d, stderr %q", got.code, got.stderr)
	}
	u.env["MAILMIGRATE_URL"] = strings.Replace(gate.server.URL, "127.0.0.1", "localhost", 1)
	if got := u.run("tasks", "list"); got.code != 0 {
		t.Errorf("with the data dir's token at localhost: exit %d, stderr %q", got.code, got.stderr)
	}
	refusedBefore, _ := gate.counts()
	u.localTokenFile = filepath.Join(t.TempDir(), "none")
	if got := u.run("tasks", "list"); got.code != 1 || !strings.Contains(got.stderr, "unauthorized") {
		t.Errorf("without any token: exit %d, stderr %q", got.code, got.stderr)
	}
	if refused, _ := gate.counts(); refused != refusedBefore+1 {
		t.Errorf("the gate refused %d requests, want %d", refused, refusedBefore+1)
	}
}

// tokenGate stands for the service's token check, which is not this
// package's: it passes requests with the token and refuses others.
type tokenGate struct {
	server   *httptest.Server
	mu       sync.Mutex
	refused  int
	streamed int
}

func startTokenGate(t *testing.T, backend, token string) *tokenGate {
	target, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target) // relays WebSocket upgrades too
	g := &tokenGate{}
	g.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+token
		if !ok {
			g.refused++
		} else if strings.HasSuffix(r.URL.Path, "/events/ws") {
			g.streamed++
		}
		g.mu.Unlock()
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(g.server.Close)
	return g
}

func (g *tokenGate) counts() (refused, streamed int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused, g.streamed
}
