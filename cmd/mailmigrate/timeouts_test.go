package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSlowClientCannotHoldTheServer is a slowloris: a client that sends
// its request headers a byte at a time is cut off by ReadHeaderTimeout,
// while another client is served meanwhile.
func TestSlowClientCannotHoldTheServer(t *testing.T) {
	t.Parallel()
	cfg := config{ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: time.Minute}
	srv := httpServer(cfg, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok") //nolint:errcheck // the test reads it
	}), discardLogger())
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(listener) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })

	// Timed from before the dial: the server's deadline starts when it
	// accepts, which can come before Dial returns here.
	start := time.Now()
	conn, err := net.Dial("tcp", listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := make(chan time.Duration, 1)
	go func() {
		// The server answers nothing but may close at any time; reading
		// sees it.
		io.Copy(io.Discard, conn) //nolint:errcheck // EOF or reset: closed either way
		closed <- time.Since(start)
	}()
	request := "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Slow: a\r\n", 100)
	go func() {
		for i := range len(request) {
			if _, err := conn.Write([]byte{request[i]}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond) // 1 100 bytes: 22 s if never cut off
		}
	}()

	// Meanwhile the server serves others.
	resp, err := http.Get("http://" + listener.Addr().String() + "/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a normal request while the slow one trickles: %v %v", err, resp)
	}
	resp.Body.Close()

	select {
	case after := <-closed:
		if after < cfg.ReadHeaderTimeout {
			t.Errorf("closed after %v, before the %v header timeout", after, cfg.ReadHeaderTimeout)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the slow client still holds its connection after 5 s")
	}
}

// TestHTTPServerTakesItsTimeoutsFromTheSettings: the settings reach the
// server (the whole-request deadlines are the handler's, per route).
func TestHTTPServerTakesItsTimeoutsFromTheSettings(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	cfg, err := parseConfig("serve", []string{"--read-header-timeout", "3s", "--idle-timeout", "7s", "--data-dir", t.TempDir()},
		envFunc(map[string]string{"MAILMIGRATE_READ_TIMEOUT": "11s", "MAILMIGRATE_WRITE_TIMEOUT": "13s"}), &stderr)
	if err != nil {
		t.Fatal(err, stderr.String())
	}
	srv := httpServer(cfg, http.NotFoundHandler(), discardLogger())
	if srv.ReadHeaderTimeout != 3*time.Second || srv.IdleTimeout != 7*time.Second || srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("server timeouts: read-header %v, idle %v, read %v, write %v", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.ReadTimeout, srv.WriteTimeout)
	}
	if l := cfg.limits(); l.ReadTimeout != 11*time.Second || l.WriteTimeout != 13*time.Second {
		t.Errorf("per-route deadlines: read %v, write %v; want 11s and 13s", l.ReadTimeout, l.WriteTimeout)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestOversizedHeadersAre431: a client cannot make the server buffer
// headers without bound.
func TestOversizedHeadersAre431(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config = httpServer(config{ReadHeaderTimeout: time.Second, IdleTimeout: time.Second}, http.NotFoundHandler(), discardLogger())
	srv.Start()
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("X-Big", strings.Repeat("a", 100<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("100 KiB of headers: %d, want 431", resp.StatusCode)
	}
}
