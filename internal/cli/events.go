package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// Stream timing. The server pings every 30 s, so a stream silent for
// longer than streamSilence is dead. Reconnects back off from
// reconnectFirst to reconnectMax; maxReconnects failures in a row give up.
const (
	streamSilence  = 75 * time.Second
	reconnectFirst = 200 * time.Millisecond
	reconnectMax   = 5 * time.Second
	maxReconnects  = 20
)

// streamMessage is an event of the stream, or a notice that the stream
// broke and is reconnecting.
type streamMessage struct {
	event  api.Event
	notice string
}

// streamEvents sends a task's events after seq `after` to out until ctx
// ends. When the connection drops it reconnects with after=<last seq>, so
// that no event is missed and none is sent twice.
func (s *session) streamEvents(ctx context.Context, taskID, after int64, out chan<- streamMessage) error {
	backoff, failures := reconnectFirst, 0
	connected := func() { backoff, failures = reconnectFirst, 0 }
	for {
		err := s.readEvents(ctx, taskID, &after, out, connected)
		if ctx.Err() != nil {
			return nil
		}
		var refused *apiError
		if errors.As(err, &refused) && refused.status < 500 {
			return fmt.Errorf("event stream: %w", err) // e.g. not found, unauthorized: retrying will not help
		}
		if failures++; failures > maxReconnects {
			return fmt.Errorf("event stream: %w", err)
		}
		select {
		case out <- streamMessage{notice: fmt.Sprintf("event stream broke (%v); reconnecting after seq %d", err, after)}:
		case <-ctx.Done():
			return nil
		}
		if !sleep(ctx, backoff) {
			return nil
		}
		backoff = min(2*backoff, reconnectMax)
	}
}

// readEvents reads one connection's events until it breaks, advancing
// *after past each event sent.
func (s *session) readEvents(ctx context.Context, taskID int64, after *int64, out chan<- streamMessage, connected func()) error {
	conn, err := s.dialEvents(ctx, taskID, *after)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	connected()
	conn.SetReadLimit(1 << 20)
	conn.SetPingHandler(func(data string) error {
		conn.SetReadDeadline(time.Now().Add(streamSilence)) //nolint:errcheck // fails only on a closed conn
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(10*time.Second))
	})
	for {
		conn.SetReadDeadline(time.Now().Add(streamSilence)) //nolint:errcheck // fails only on a closed conn
		_, data, err := conn.ReadMessage()
		if err != nil {
			return err
		}
		var ev api.Event
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("bad event %q: %w", data, err)
		}
		if ev.Seq <= *after {
			continue // already sent before a reconnect
		}
		select {
		case out <- streamMessage{event: ev}:
			*after = ev.Seq
		case <-ctx.Done():
			return nil
		}
	}
}

func (s *session) dialEvents(ctx context.Context, taskID, after int64) (*websocket.Conn, error) {
	u, err := url.Parse(s.url + apiPath + "/events/ws")
	if err != nil {
		return nil, err
	}
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1) // http→ws, https→wss
	u.RawQuery = url.Values{"task_id": {itoa(taskID)}, "after": {strconv.FormatInt(after, 10)}}.Encode()
	header := http.Header{}
	if s.token != "" {
		header.Set("Authorization", "Bearer "+s.token)
	}
	dialer := websocket.Dialer{HandshakeTimeout: 15 * time.Second, Proxy: http.ProxyFromEnvironment}
	conn, resp, err := dialer.DialContext(ctx, u.String(), header)
	if err != nil && resp != nil {
		// The server said no; its plain-text body says why.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, &apiError{status: resp.StatusCode, text: strings.TrimSpace(string(body))}
	}
	return conn, err
}

// sleep waits d, or less when ctx ends first; it says whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// lastEventSeq is the seq of the task's newest event, 0 without any: a
// follow starts after it, so that it shows only what happens from now on.
func lastEventSeq(ctx context.Context, s *session, taskID int64) (int64, error) {
	return newestSeq(func(after int64) ([]api.Event, error) { return eventPage(ctx, s, taskID, after) })
}

// newestSeq pages through stored events to the newest, and returns its
// seq, 0 without any.
func newestSeq(page func(after int64) ([]api.Event, error)) (int64, error) {
	var after int64
	for {
		events, err := page(after)
		if err != nil || len(events) == 0 {
			return after, err
		}
		after = events[len(events)-1].Seq
		if len(events) < eventPageSize { // a short page is the last
			return after, nil
		}
	}
}

// eventPageSize is the most events the service gives at once.
const eventPageSize = 1000

// eventPage is a page of the task's stored events after seq after.
func eventPage(ctx context.Context, s *session, taskID, after int64) ([]api.Event, error) {
	limit := eventPageSize
	resp, err := s.client.ListTaskEventsWithResponse(ctx, taskID, &api.ListTaskEventsParams{After: &after, Limit: &limit})
	if err := expect(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return *resp.JSON200, nil
}
