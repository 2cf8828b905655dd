package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/cli"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

func TestIsLoopbackHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"127.0.0.1":         true,
		"127.1.2.3":         true,
		"::1":               true,
		"localhost":         true,
		"LocalHost":         true,
		"::ffff:127.0.0.1":  true,
		"":                  false, // ":8080" listens on every interface
		"0.0.0.0":           false,
		"::":                false,
		"192.168.1.10":      false,
		"10.0.0.1":          false,
		"128.0.0.1":         false,
		"localhost.example": false,
		"example.com":       false,
		"fe80::1":           false,
	} {
		if got := cli.IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestCheckExposure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		listen   string
		insecure bool
		exposed  bool
	}{
		{"127.0.0.1:8080", true, false},
		{"[::1]:8080", true, false},
		{"localhost:8080", true, false},
		{":8080", true, true},
		{"0.0.0.0:8080", true, true},
		{"[::]:8080", true, true},
		{"192.0.2.1:8080", true, true},
		{"0.0.0.0:8080", false, false}, // a token protects it
	} {
		exposed, err := checkExposure(tc.listen, tc.insecure)
		if err != nil || exposed != tc.exposed {
			t.Errorf("checkExposure(%q, insecure %v) = %v, %v; want exposed %v", tc.listen, tc.insecure, exposed, err, tc.exposed)
		}
	}
	if _, err := checkExposure("no-port", false); err == nil {
		t.Error("an address without a port was accepted")
	}
}

func TestLoadAPIToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const good = "0123456789abcdef0123"
	for _, tc := range []struct {
		name    string
		cfg     config
		want    string
		wantErr string
	}{
		{"none", config{}, "", ""},
		{"value", config{APIToken: good}, good, ""},
		{"file, newline trimmed", config{APITokenFile: file("t", good+"\n")}, good, ""},
		{"base64 with padding", config{APIToken: "q83vEjRWeJq83vEjRWeJ+/=="}, "q83vEjRWeJq83vEjRWeJ+/==", ""},
		{"empty file", config{APITokenFile: file("empty", " \n")}, "", "is empty"},
		{"missing file", config{APITokenFile: filepath.Join(dir, "nope")}, "", "no such file"},
		{"too short", config{APIToken: "short"}, "", "at least 16"},
		{"a space", config{APIToken: "0123456789 abcdef0123"}, "", "characters a bearer token cannot carry"},
		{"a comma", config{APIToken: "0123456789,abcdef0123"}, "", "characters a bearer token cannot carry"},
		{"only padding", config{APIToken: "================"}, "", "characters a bearer token cannot carry"},
	} {
		got, err := loadAPIToken(tc.cfg)
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: %q, %v; want %q, error with %q", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestServeOnEveryInterfaceWithoutAToken: a service on every interface
// without a configured token starts (it makes a token of its own, after
// the database, which does not exist here); a token and --insecure-no-auth
// together are refused before anything starts.
func TestServeOnEveryInterfaceWithoutAToken(t *testing.T) {
	t.Parallel()
	const noDatabase = "postgres://mailmigrate@127.0.0.1:1/none?connect_timeout=2"
	for _, listen := range []string{"0.0.0.0:0", ":0"} {
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"serve", "--listen", listen, "--database-url", noDatabase, "--data-dir", t.TempDir()},
			envFunc(nil), &bytes.Buffer{}, &stderr)
		if code != 1 || strings.Contains(stderr.String(), "refusing") || !strings.Contains(stderr.String(), "database") {
			t.Errorf("serve --listen %s without a token: exit %d, stderr:\n%s\nwant it to get as far as the database", listen, code, stderr.String())
		}
	}
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--database-url", noDatabase, "--insecure-no-auth"},
		envFunc(map[string]string{"MAILMIGRATE_API_TOKEN": "0123456789abcdef0123"}), &bytes.Buffer{}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "choose one") || strings.Contains(stderr.String(), "database") {
		t.Errorf("a token and --insecure-no-auth: exit %d, stderr:\n%s\nwant exit 1 before the database", code, stderr.String())
	}
}

func TestServeHelpDoesNotPrintTheToken(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef-do-not-print"
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"serve", "-h"}, envFunc(map[string]string{"MAILMIGRATE_API_TOKEN": token}), &stdout, &stderr)
	if strings.Contains(stdout.String()+stderr.String(), token) {
		t.Errorf("serve -h printed the token from the environment:\n%s", stderr.String())
	}
	cfg, err := parseConfig("serve", []string{"--data-dir", t.TempDir()}, envFunc(map[string]string{"MAILMIGRATE_API_TOKEN": token}), &stderr)
	if err != nil || cfg.APIToken != token {
		t.Errorf("the token from the environment: %q, %v", cfg.APIToken, err)
	}
}

// TestServeWithATokenOnEveryInterface: with a token, serve listens beyond
// loopback, and its API requires the token (the setting reaches the
// handler), while /healthz stays open.
func TestServeWithATokenOnEveryInterface(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := []string{"serve", "--database-url", dbtest.URL(t), "--listen", "0.0.0.0:0", "--data-dir", t.TempDir()}
	stderr := &testsupport.SyncBuffer{}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		run(ctx, args, envFunc(map[string]string{"MAILMIGRATE_API_TOKEN_FILE": tokenFile}), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	base := strings.Replace(waitListening(t, stderr, finished, 30*time.Second), "0.0.0.0", "127.0.0.1", 1)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	if status, _ := doRequest(t, client, "GET", base+"/api/v1/endpoints", ""); status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/endpoints without the token: %d, want 401", status)
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/endpoints", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/v1/endpoints with the token: %d, want 200", resp.StatusCode)
	}
	if status, _ := doRequest(t, client, "GET", base+"/healthz", ""); status != http.StatusOK {
		t.Errorf("GET /healthz without a token: %d, want 200", status)
	}
	if !strings.Contains(stderr.String(), "api_token_required=true") || strings.Contains(stderr.String(), token) {
		t.Errorf("the log should say a token is required and never show it:\n%s", stderr)
	}
}
