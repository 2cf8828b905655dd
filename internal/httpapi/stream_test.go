package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

func (s *testService) dialStream(t *testing.T, query string) *websocket.Conn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(s.api, "http") + "/events/ws" + query
	header := http.Header{}
	if s.token != "" {
		header.Set("Authorization", "Bearer "+s.token)
	}
	conn, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func (s *testService) appendEvent(t *testing.T, taskID int64, message string) {
	t.Helper()
	if err := s.store.EventAppend(context.Background(), migration.Event{Kind: migration.EventTestOK, TaskID: taskID, Message: message}); err != nil {
		t.Fatal(err)
	}
}

// nextEvents reads n events, failing after a few seconds without one.
func nextEvents(t *testing.T, conn *websocket.Conn, n int) []api.Event {
	t.Helper()
	events := make([]api.Event, n)
	for i := range events {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if err := conn.ReadJSON(&events[i]); err != nil {
			t.Fatalf("event %d of %d: %v", i+1, n, err)
		}
	}
	return events
}

func messages(events []api.Event) string {
	m := make([]string, len(events))
	for i, e := range events {
		m[i] = e.Message
	}
	return strings.Join(m, ",")
}

// TestEventStreamReplaysThenStreamsLive covers the WebSocket: replay after
// a seq, live events as they commit, the task filter, and a reconnect
// that picks up where the client left off, with no gap and no duplicate.
func TestEventStreamReplaysThenStreamsLive(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	a, src, dst := s.newTask(t)
	b := s.createTask(t, src, dst)
	s.appendEvent(t, a, "a1")
	s.appendEvent(t, b, "b1")
	s.appendEvent(t, a, "a2")

	conn := s.dialStream(t, fmt.Sprintf("?task_id=%d", a))
	replay := nextEvents(t, conn, 2)
	if messages(replay) != "a1,a2" {
		t.Fatalf("replay %s, want a1,a2", messages(replay))
	}
	s.appendEvent(t, b, "b2")
	s.appendEvent(t, a, "a3")
	live := nextEvents(t, conn, 1)
	if messages(live) != "a3" || live[0].Seq <= replay[1].Seq {
		t.Fatalf("live %+v, want a3 after a2", live)
	}

	// Reconnecting after a2 gives a3 again and nothing before it.
	again := s.dialStream(t, fmt.Sprintf("?task_id=%d&after=%d", a, replay[1].Seq))
	if got := messages(nextEvents(t, again, 1)); got != "a3" {
		t.Errorf("after reconnect: %s, want a3", got)
	}
	// Without a task, every task's events.
	all := s.dialStream(t, "")
	if got := messages(nextEvents(t, all, 5)); got != "a1,b1,a2,b2,a3" {
		t.Errorf("all tasks: %s", got)
	}
	// live=true skips the stored log: the first event is the next one.
	fresh := s.dialStream(t, "?live=true&after=1")
	s.appendEvent(t, b, "b3")
	if got := nextEvents(t, fresh, 1); messages(got) != "b3" {
		t.Errorf("live stream began with %s, want b3", messages(got))
	}

	for query, want := range map[string]reply{
		"?task_id=x":  {status: http.StatusBadRequest, body: "bad task_id"},
		"?after=-1":   {status: http.StatusBadRequest, body: "bad after"},
		"?live=maybe": {status: http.StatusBadRequest, body: "bad live"},
		"?task_id=99": {status: http.StatusNotFound, body: "not found"},
	} {
		wantText(t, s.do(t, "GET", "/events/ws"+query, ""), want.status, want.body)
	}
}

// TestEventStreamSeesManyEventsInOrder streams events while they are
// being written, more than one page of them, each exactly once, in order.
func TestEventStreamSeesManyEventsInOrder(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	a, _, _ := s.newTask(t)
	conn := s.dialStream(t, fmt.Sprintf("?task_id=%d", a))
	const n = 1200 // more than a page of the stream
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			s.appendEvent(t, a, fmt.Sprint(i))
		}
	}()
	events := nextEvents(t, conn, n)
	<-done
	for i, e := range events {
		if e.Message != fmt.Sprint(i) {
			t.Fatalf("event %d is %q: a gap or a duplicate", i, e.Message)
		}
	}
}
