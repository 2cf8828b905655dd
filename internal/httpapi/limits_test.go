package httpapi_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

func TestBodyLimitsAreConfigurable(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{Limits: httpapi.Limits{MaxJSONBodyBytes: 100, MaxCSVBodyBytes: 200}})
	taskID, _, _ := s.newTask(t)
	padded := func(n int) string { return `{"tls_mode":"ssl","role_label":"` + strings.Repeat("x", n) + `"}` }
	if got := s.do(t, "POST", "/endpoints", padded(50)); got.status != http.StatusCreated {
		t.Errorf("a body under the limit: %d %q", got.status, got.body)
	}
	wantText(t, s.do(t, "POST", "/endpoints", padded(100)), http.StatusRequestEntityTooLarge, "request body too large")
	path := fmt.Sprintf("/tasks/%d/accounts/import", taskID)
	wantText(t, s.do(t, "POST", path, strings.Repeat("someone@example.com,password\n", 8)), http.StatusRequestEntityTooLarge, "request body too large")
	if got := s.do(t, "POST", path, "a@example.com,pw\n"); got.status != http.StatusCreated {
		t.Errorf("a file under the limit: %d %q", got.status, got.body)
	}
}

func TestCSVOfMoreThan100000RowsIs400(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	var b strings.Builder
	for i := range 100_001 {
		fmt.Fprintf(&b, "u%d@x,p\n", i)
	}
	wantText(t, s.do(t, "POST", fmt.Sprintf("/tasks/%d/accounts/import", taskID), b.String()),
		http.StatusBadRequest, "line 100001: more than 100000 accounts in one file; split it")
	if ids := s.accountIDs(t, taskID); len(ids) != 0 {
		t.Errorf("%d accounts stored from a refused file", len(ids))
	}
}

// TestEveryStringFieldIsBounded sends one byte more than its limit in
// each text field of each resource, on create and on update.
func TestEveryStringFieldIsBounded(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, src, dst := s.newTask(t)
	accountID := s.createAccount(t, taskID, "a@x")
	long, host := strings.Repeat("x", 1025), strings.Repeat("h", 254)
	task := func(field string) string {
		return fmt.Sprintf(`{"name":"n","source_endpoint_id":%d,"destination_endpoint_id":%d,%s}`, src, dst, field)
	}
	account := func(field string) string { return `{"source_login":"b@x","source_password":"pw",` + field + `}` }
	cases := []struct{ name, body string }{
		{"endpoint role_label", `{"tls_mode":"ssl","role_label":"` + long + `"}`},
		{"endpoint host", `{"tls_mode":"ssl","host":"` + host + `"}`},
		{"task name", fmt.Sprintf(`{"name":"%s","source_endpoint_id":%d,"destination_endpoint_id":%d}`, long, src, dst)},
		{"task include_folders", task(`"options":{"include_folders":["` + long + `"]}`)},
		{"task exclude_folders", task(`"options":{"exclude_folders":["` + long + `"]}`)},
		{"task folder_map source", task(`"options":{"folder_map":{"` + long + `":"x"}}`)},
		{"task folder_map destination", task(`"options":{"folder_map":{"x":"` + long + `"}}`)},
		{"task since", task(`"options":{"since":"` + long + `"}`)},
		{"account source_login", `{"source_login":"` + long + `","source_password":"pw"}`},
		{"account source_password", `{"source_login":"b@x","source_password":"` + long + `"}`},
		{"account destination_login", account(`"destination_login":"` + long + `"`)},
		{"account destination_password", account(`"destination_password":"` + long + `"`)},
	}
	for _, tc := range cases {
		resource, _, _ := strings.Cut(tc.name, " ")
		var paths []string
		switch resource {
		case "endpoint":
			paths = []string{"POST /endpoints", fmt.Sprintf("PUT /endpoints/%d", src)}
		case "task":
			paths = []string{"POST /tasks", fmt.Sprintf("PUT /tasks/%d", taskID)}
		case "account":
			paths = []string{fmt.Sprintf("POST /tasks/%d/accounts", taskID), fmt.Sprintf("PUT /tasks/%d/accounts/%d", taskID, accountID)}
		}
		for _, p := range paths {
			method, path, _ := strings.Cut(p, " ")
			got := s.do(t, method, path, tc.body)
			if got.status != http.StatusBadRequest || len(got.body) > 2000 {
				t.Errorf("%s, %s: %d %.200q, want a short 400", tc.name, p, got.status, got.body)
			}
		}
	}
}

func (s *testService) createAccount(t *testing.T, taskID int64, login string) int64 {
	t.Helper()
	got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/accounts", taskID), `{"source_login":"`+login+`","source_password":"pw"}`)
	if got.status != http.StatusCreated {
		t.Fatalf("create account: %d %s", got.status, got.body)
	}
	var id int64
	if _, err := fmt.Sscanf(got.body, `{"id":%d}`, &id); err != nil {
		t.Fatalf("create account: %q: %v", got.body, err)
	}
	return id
}

func TestEventStreamsAreCapped(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{Limits: httpapi.Limits{MaxEventStreams: 2}})
	first := s.dialStream(t, "")
	s.dialStream(t, "")
	_, resp, err := s.dialWith(t, "", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third stream: %v %v, want 503", err, resp)
	}
	wantText(t, s.do(t, "GET", "/events/ws", ""), http.StatusServiceUnavailable, "too many event streams")
	// A stream that ends frees its slot.
	first.Close()
	testsupport.Eventually(t, 5*time.Second, func() error {
		if _, _, err := s.dialWith(t, "", nil); err != nil {
			return fmt.Errorf("no stream can open after one of two closed: %w", err)
		}
		return nil
	})
}

func TestEventStreamClosesOnOversizedClientMessage(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	conn := s.dialStream(t, "")
	if err := conn.WriteMessage(websocket.TextMessage, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := conn.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Errorf("after a 1 KiB message: %v, want close 1009 (message too big)", err)
	}
}

// TestEventStreamOutlivesRequestDeadlines: the read and write deadlines of
// ordinary requests do not cut the long-lived stream.
func TestEventStreamOutlivesRequestDeadlines(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{Limits: httpapi.Limits{ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond}})
	taskID, _, _ := s.newTask(t)
	// The same keep-alive connection would carry the deadlines of an
	// earlier request; a fresh dial still meets the stream's own.
	conn := s.dialStream(t, fmt.Sprintf("?task_id=%d", taskID))
	time.Sleep(time.Second)
	s.appendEvent(t, taskID, "late")
	if got := messages(nextEvents(t, conn, 1)); got != "late" {
		t.Errorf("event %q, want late", got)
	}
}

// TestTrickledBodyIsCutOff: a client that sends its body too slowly is
// cut off by the read deadline instead of holding the request open.
func TestTrickledBodyIsCutOff(t *testing.T) {
	t.Parallel()
	s := newTestServiceWith(t, httpapi.Options{Limits: httpapi.Limits{ReadTimeout: 300 * time.Millisecond}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/v1/endpoints HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	go func() {
		for range 200 {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond) // 10 s if never cut off
		}
	}()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, err := io.ReadAll(conn)
	var timeout net.Error
	if errors.As(err, &timeout) && timeout.Timeout() {
		t.Fatalf("the trickling request still held after 5 s; got %q", answer)
	}
	if took := time.Since(start); took < 300*time.Millisecond || !strings.HasPrefix(string(answer), "HTTP/1.1 400") {
		t.Errorf("cut off after %v with %q, want a 400 after the 300ms read deadline", took, answer)
	}
}

func TestPanicIs500WithoutAStackTrace(t *testing.T) {
	t.Parallel()
	logs := &testsupport.SyncBuffer{}
	// No service: the first handler that uses it panics on a nil pointer.
	handler := httpapi.NewHandler(httpapi.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	got := rawRequest(t, "GET", srv.URL+"/api/v1/endpoints", "")
	wantText(t, got, http.StatusInternalServerError, "internal error")
	if !strings.Contains(logs.String(), "panic in handler") {
		t.Errorf("the panic was not logged:\n%s", logs)
	}
	// The server lives on.
	if got := rawRequest(t, "GET", srv.URL+"/healthz", ""); got.status != http.StatusOK {
		t.Errorf("/healthz after a panic: %d", got.status)
	}
}
