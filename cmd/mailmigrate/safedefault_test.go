package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// TestTokenlessStartStillAsksForAToken starts serve as `make run` does,
// with no token configured, and plays the pages of other sites that its
// operator might visit: a DNS-rebound page (its own host name in Host),
// cross-site form and fetch posts (text/plain bodies, Origin or
// Sec-Fetch-Site of another site), and a cross-site WebSocket. Each is
// refused, nothing is created, and the token the service made for itself
// (in the data dir, mode 0600) is what lets a client in.
func TestTokenlessStartStillAsksForAToken(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &testsupport.SyncBuffer{}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		run(ctx, []string{"serve", "--database-url", dbtest.URL(t), "--listen", "127.0.0.1:0", "--data-dir", dataDir},
			envFunc(nil), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	base := waitListening(t, stderr, finished, 30*time.Second)
	info, err := os.Stat(filepath.Join(dataDir, localTokenFileName))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v, mode %v; want it made with mode 0600", err, info.Mode().Perm())
	}
	token := readLocalToken(t, dataDir)
	if strings.Contains(stderr.String(), token) {
		t.Errorf("the log shows the token:\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "sign in to the console") {
		t.Errorf("the log does not say how to sign in:\n%s", stderr)
	}
	anonymous := &http.Client{Timeout: 10 * time.Second}
	operator := bearerClient(token)

	for _, tc := range []struct {
		name           string
		client         *http.Client
		method, path   string
		body           string
		header         map[string]string
		status         int
		bodyWithPrefix string
	}{
		{"no token", anonymous, "GET", "/api/v1/tasks", "", nil, 401, "unauthorized"},
		{"a wrong token", bearerClient("mmt_0000000000000000000000000000000000000000000000000000000000000000"), "GET", "/api/v1/tasks", "", nil, 401, "unauthorized"},
		{"DNS rebinding reads", anonymous, "GET", "/api/v1/tasks", "", map[string]string{"Host": "evil.example:8080"}, 403, "host not allowed"},
		{"DNS rebinding posts", anonymous, "POST", "/api/v1/endpoints", `{"host":"evil.example","tls_mode":"plain"}`,
			map[string]string{"Host": "evil.example:8080", "Content-Type": "text/plain"}, 403, "host not allowed"},
		{"DNS rebinding, even with the token", operator, "GET", "/api/v1/tasks", "", map[string]string{"Host": "evil.example"}, 403, "host not allowed"},
		{"a cross-site form post", anonymous, "POST", "/api/v1/endpoints", `{"host":"evil.example","tls_mode":"plain"}`,
			map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403, "cross-origin request refused"},
		{"a cross-site fetch", operator, "POST", "/api/v1/endpoints", `{"host":"evil.example","tls_mode":"plain"}`,
			map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, 403, "cross-origin request refused"},
		{"a JSON body as text/plain", operator, "POST", "/api/v1/endpoints", `{"host":"evil.example","tls_mode":"plain"}`,
			map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type must be application/json"},
		{"a JSON body without a type", operator, "POST", "/api/v1/endpoints", `{"host":"evil.example","tls_mode":"plain"}`, nil, 415, "Content-Type must be application/json"},
		{"the console's own request", operator, "GET", "/api/v1/endpoints", "",
			map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": base}, 200, "[]"},
		{"health needs nothing", anonymous, "GET", "/healthz", "", map[string]string{"Host": "10.0.0.7:8080"}, 200, "ok"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		if host := tc.header["Host"]; host != "" {
			req.Host = host
		}
		resp, err := tc.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.HasPrefix(strings.TrimSpace(string(got)), tc.bodyWithPrefix) {
			t.Errorf("%s: %d %q, want %d %q…", tc.name, resp.StatusCode, got, tc.status, tc.bodyWithPrefix)
		}
	}
	if status, body := doRequest(t, operator, "GET", base+"/api/v1/endpoints", ""); status != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("after the refused requests the endpoints are %d %s, want none", status, body)
	}

	// Each refused attempt is in the audit trail, with whose token came
	// with it where one was looked at: the service's own, by its name.
	status, body := doRequest(t, operator, "GET", base+"/api/v1/audit", "")
	var trail []struct{ Actor, Method, Outcome string }
	if err := json.Unmarshal([]byte(body), &trail); status != 200 || err != nil {
		t.Fatalf("audit: %d %s %v", status, body, err)
	}
	if len(trail) != 5 || trail[0].Outcome != "refused (415 Unsupported Media Type)" ||
		!strings.HasPrefix(trail[0].Actor, "API token ") || !strings.Contains(trail[0].Actor, "made at the start of a service with the data dir "+dataDir) ||
		trail[4].Actor != "" || trail[4].Outcome != "refused (403 Forbidden)" {
		t.Errorf("the audit trail of the refused requests: %+v; want the 5 POSTs, newest first, the 415s by the service's own token", trail)
	}

	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/api/v1/events/ws"
	conn, resp, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Origin": {"http://evil.example"}, "Sec-WebSocket-Protocol": {"bearer, " + token}})
	if err == nil {
		conn.Close()
		t.Error("a cross-site WebSocket with the token was accepted")
	} else if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site WebSocket: %v, want 403", err)
	}
	conn, _, err = websocket.DefaultDialer.Dial(wsURL, http.Header{"Origin": {base}, "Sec-WebSocket-Protocol": {"bearer, " + token}})
	if err != nil {
		t.Fatalf("the console's WebSocket with the token: %v", err)
	}
	conn.Close()
}
