package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/cli"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// runMainEnv makes the test binary act as mailmigrate itself: subprocess
// tests run os.Executable() with it set. That is the same main() that
// `go build` would link, built once with the tests and with the race
// detector on, without a second, uninstrumented build of every dependency
// or a binary left behind in a temp dir.
const runMainEnv = "MAILMIGRATE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	dbtest.Main(m)
}

// TestEveryCLIResourceIsACommand: each resource the CLI has is reached
// from the binary, which lists its commands; none is "unknown".
func TestEveryCLIResourceIsACommand(t *testing.T) {
	t.Parallel()
	for _, resource := range cli.Resources() {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{resource, "help"}, func(string) string { return "" }, &stdout, &stderr)
		if code != 0 || !strings.HasPrefix(stdout.String(), "Usage: mailmigrate "+resource) {
			t.Errorf("mailmigrate %s help: exit %d, %q %q", resource, code, stdout.String(), stderr.String())
		}
	}
	if len(cli.Resources()) < 6 {
		t.Errorf("the CLI has %v: fewer resources than it had", cli.Resources())
	}
}

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantStdout string // a prefix; "" means nothing on stdout
		wantStderr []string
	}{
		{name: "version", args: []string{"version"}, wantStdout: "mailmigrate "},
		{name: "--version", args: []string{"--version"}, wantStdout: "mailmigrate "},
		{name: "help", args: []string{"help"}, wantStdout: "mailmigrate moves mailboxes"},
		{name: "no arguments", wantCode: 2, wantStderr: []string{"Usage:", "mailmigrate serve"}},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 2,
			wantStderr: []string{`unknown command "frobnicate"`, "Usage:"}},
		{name: "bad log level", args: []string{"serve", "--log-level", "loud"}, wantCode: 1,
			wantStderr: []string{`log level "loud"`, "debug, info, warn or error"}},
		{name: "bad log level from env", args: []string{"serve"}, env: map[string]string{"MAILMIGRATE_LOG_LEVEL": "loud"},
			wantCode: 1, wantStderr: []string{`log level "loud"`}},
		{name: "flag wins over env", args: []string{"serve", "--log-level", "shouty"},
			env: map[string]string{"MAILMIGRATE_LOG_LEVEL": "loud"}, wantCode: 1, wantStderr: []string{`log level "shouty"`}},
		{name: "bad log format", args: []string{"migrate", "--log-format", "xml"}, wantCode: 1,
			wantStderr: []string{`log format "xml"`}},
		{name: "bad shutdown timeout", args: []string{"serve", "--shutdown-timeout", "soon"}, wantCode: 1,
			wantStderr: []string{`shutdown timeout "soon"`}},
		{name: "zero read timeout", args: []string{"serve", "--read-timeout", "0s"}, wantCode: 1,
			wantStderr: []string{"--read-timeout", "must be positive"}},
		{name: "bad insecure-no-auth from env", args: []string{"serve"}, env: map[string]string{"MAILMIGRATE_INSECURE_NO_AUTH": "maybe"},
			wantCode: 1, wantStderr: []string{`MAILMIGRATE_INSECURE_NO_AUTH="maybe"`}},
		{name: "bad body limit from env", args: []string{"serve"}, env: map[string]string{"MAILMIGRATE_MAX_JSON_BODY": "1MiB"},
			wantCode: 1, wantStderr: []string{"--max-json-body", "must be positive"}},
		{name: "token twice", args: []string{"serve", "--api-token", "0123456789abcdef0123", "--api-token-file", "/tmp/t"}, wantCode: 1,
			wantStderr: []string{"API token given twice"}},
		{name: "unexpected argument", args: []string{"serve", "extra"}, wantCode: 2,
			wantStderr: []string{`unexpected argument "extra"`}},
		{name: "unexpected argument to migrate", args: []string{"migrate", "--log-level", "debug", "extra"}, wantCode: 2,
			wantStderr: []string{`unexpected argument "extra"`}},
		{name: "unknown flag", args: []string{"serve", "--colour"}, wantCode: 2,
			wantStderr: []string{"flag provided but not defined: -colour"}},
		{name: "client command without its arguments", args: []string{"tasks", "get"}, wantCode: 2,
			wantStderr: []string{"want ID, got 0 arguments", "Usage: mailmigrate tasks get ID"}},
		{name: "client command without a service", args: []string{"endpoints", "list"}, env: map[string]string{"MAILMIGRATE_URL": "http://127.0.0.1:1"},
			wantCode: 1, wantStderr: []string{"mailmigrate: ", "connection refused"}},
		{name: "help lists the client commands", args: []string{"help"}, wantStdout: "mailmigrate moves mailboxes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, envFunc(tt.env), &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.wantStdout) || (tt.wantStdout == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q, want it to start with %q", stdout.String(), tt.wantStdout)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not mention %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

func TestServeHelpListsEveryFlagWithItsVariable(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"serve", "-h"}, envFunc(nil), &stdout, &stderr); code != 0 {
		t.Fatalf("serve -h: exit code %d, want 0; stderr:\n%s", code, stderr.String())
	}
	// The flag package prints "  -name type" and then the usage text.
	help := map[string]string{}
	var name string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if m := flagLineRE.FindStringSubmatch(line); m != nil {
			name = m[1]
		}
		if name != "" {
			help[name] += line + "\n"
		}
	}
	for _, want := range []string{
		"listen", "data-dir", "database-url", "secret-key-file", "log-level", "log-format", "shutdown-timeout",
		"api-token", "api-token-file", "insecure-no-auth", "read-header-timeout", "read-timeout", "write-timeout",
		"idle-timeout", "max-json-body", "max-csv-body", "max-event-streams",
		"workers", "max-connections-per-host", "lease-expiry", "worker-id", "allowed-hosts", "webhook-allowed-hosts",
		"audit-retention",
	} {
		if help[want] == "" {
			t.Errorf("serve -h does not list -%s:\n%s", want, stderr.String())
		}
	}
	for name, text := range help {
		variable := "MAILMIGRATE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if !strings.Contains(text, variable) {
			t.Errorf("serve -h does not name %s for -%s:\n%s", variable, name, text)
		}
	}
	if !strings.Contains(stderr.String(), "MAILMIGRATE_SECRET_KEY (base64") {
		t.Errorf("serve -h does not name the environment-only MAILMIGRATE_SECRET_KEY:\n%s", stderr.String())
	}
	if !strings.Contains(help["database-url"], "or DATABASE_URL") {
		t.Errorf("serve -h does not mention the plain DATABASE_URL fallback:\n%s", help["database-url"])
	}
}

var flagLineRE = regexp.MustCompile(`^  -([a-z][a-z-]*)\b`)

func TestMigrateOnMigratedDatabaseAppliesNothing(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"flag", "MAILMIGRATE_DATABASE_URL", "DATABASE_URL"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			url := dbtest.URL(t)
			args, env := []string{"migrate", "--data-dir", t.TempDir()}, map[string]string{}
			if how == "flag" {
				args = append(args, "--database-url", url)
			} else {
				env[how] = url
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, envFunc(env), &stdout, &stderr); code != 0 {
				t.Fatalf("migrate: exit code %d, want 0; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), "applied 0 migrations") {
				t.Fatalf("migrate printed %q, want it to report 0 migrations applied", stdout.String())
			}
		})
	}
}

func TestServeWithDatabaseURL(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dataDir := t.TempDir()
	args := []string{"serve", "--database-url", dbtest.URL(t), "--listen", "127.0.0.1:0", "--data-dir", dataDir}
	stderr := &testsupport.SyncBuffer{}
	var code int
	finished := make(chan struct{})
	go func() {
		code = run(ctx, args, envFunc(nil), io.Discard, stderr)
		close(finished)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not return after its context ended; stderr:\n%s", stderr)
		}
	})
	base := waitListening(t, stderr, finished, 30*time.Second)

	client := bearerClient(readLocalToken(t, dataDir))
	defer client.CloseIdleConnections()
	if status, body := doRequest(t, client, "GET", base+"/healthz", ""); status != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("GET /healthz = %d %q, want 200 ok", status, body)
	}
	if status, body := doRequest(t, client, "GET", base+"/readyz", ""); status != http.StatusOK {
		t.Errorf("GET /readyz = %d %q, want 200", status, body)
	}
	id := createEndpoint(t, client, base, "h")
	if !listsEndpoint(t, client, base, id, "h") {
		t.Errorf("endpoint %d is not listed after its creation", id)
	}

	cancel()
	select {
	case <-finished:
		if code != 0 {
			t.Fatalf("serve exited %d after its context ended, want 0; stderr:\n%s", code, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not return after its context ended; stderr:\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "msg=stopped") {
		t.Errorf("serve did not log that it stopped; stderr:\n%s", stderr)
	}
}

// listeningRE matches serve's log line with its address.
var listeningRE = regexp.MustCompile(`msg=listening url=(http://\S+)`)

// waitListening returns the URL that serve reports in log that it listens
// on, failing if it has not within timeout or if exited is closed first.
func waitListening(t *testing.T, log fmt.Stringer, exited <-chan struct{}, timeout time.Duration) string {
	t.Helper()
	var url string
	testsupport.Eventually(t, timeout, func() error {
		if m := listeningRE.FindStringSubmatch(log.String()); m != nil {
			url = m[1]
			return nil
		}
		select {
		case <-exited:
			t.Fatalf("mailmigrate ended before listening; output:\n%s", log)
		default:
		}
		return fmt.Errorf("mailmigrate does not listen; output:\n%s", log)
	})
	return url
}

// createEndpoint registers an endpoint on host and returns its id.
func createEndpoint(t *testing.T, client *http.Client, base, host string) int64 {
	t.Helper()
	status, body := doRequest(t, client, "POST", base+"/api/v1/endpoints", fmt.Sprintf(`{"tls_mode":"ssl","host":%q}`, host))
	if status != http.StatusCreated {
		t.Fatalf("POST /api/v1/endpoints = %d %q, want 201", status, body)
	}
	var created struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || created.ID <= 0 {
		t.Fatalf("POST /api/v1/endpoints answered %q: want a positive id (%v)", body, err)
	}
	return created.ID
}

// listsEndpoint reports whether GET /api/v1/endpoints lists id on host.
func listsEndpoint(t *testing.T, client *http.Client, base string, id int64, host string) bool {
	t.Helper()
	status, body := doRequest(t, client, "GET", base+"/api/v1/endpoints", "")
	if status != http.StatusOK {
		t.Fatalf("GET /api/v1/endpoints = %d %q, want 200", status, body)
	}
	var endpoints []struct {
		ID   int64  `json:"id"`
		Host string `json:"host"`
	}
	if err := json.Unmarshal([]byte(body), &endpoints); err != nil {
		t.Fatalf("GET /api/v1/endpoints answered %q: %v", body, err)
	}
	for _, e := range endpoints {
		if e.ID == id && e.Host == host {
			return true
		}
	}
	return false
}

func doRequest(t *testing.T, client *http.Client, method, url, jsonBody string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(jsonBody))
	if err != nil {
		t.Fatal(err)
	}
	if jsonBody != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return resp.StatusCode, string(body)
}

// readLocalToken is the API token a service started without one made for
// itself in dataDir.
func readLocalToken(t *testing.T, dataDir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, localTokenFileName))
	if err != nil {
		t.Fatalf("the service made no API token in its data dir: %v", err)
	}
	return strings.TrimSpace(string(data))
}

// dataDirOf is the data dir a serve process with the environment env uses.
func dataDirOf(env []string) string {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return localTokenFileDir(func(key string) string { return vars[key] })
}

// localTokenFileDir is the folder of the file the CLI reads the token from.
func localTokenFileDir(getenv func(string) string) string {
	return filepath.Dir(localTokenFile(getenv))
}

// bearerClient is an HTTP client that sends token with every request.
func bearerClient(token string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: bearerTransport(token)}
}

type bearerTransport string

func (token bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(token))
	return http.DefaultTransport.RoundTrip(r)
}

// envFunc is a getenv on vars alone, so that the tests' own environment
// (DATABASE_URL, MAILMIGRATE_*) cannot leak in.
func envFunc(vars map[string]string) func(string) string {
	return func(key string) string { return vars[key] }
}
