package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/metrics"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// Live stream timing: pings keep proxies from closing an idle stream and
// find dead peers; a peer that does not take a frame within writeWait is
// too slow and is closed (it reconnects with ?after=).
const (
	pingInterval = 30 * time.Second
	pongWait     = 2 * pingInterval
	writeWait    = 10 * time.Second
	streamPage   = 500
)

// Waker wakes a subscriber when events may have been committed.
type Waker interface {
	Subscribe() (<-chan struct{}, func())
}

// streamPath is the WebSocket route of the live event log.
const streamPath = BasePath + "/events/ws"

// maxClientMessageBytes caps a frame from a client: the stream expects
// nothing from it but pongs and the close handshake.
const maxClientMessageBytes = 512

// upgrader accepts the `bearer` subprotocol, by which a browser passes the
// API token (see requireToken), and answers it alone.
var upgrader = websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 16 << 10, Subprotocols: []string{wsTokenProtocol}}

// streamEvents serves GET /api/v1/events/ws?task_id=&after=: first the
// stored events after `after`, then the live ones, one JSON event per
// text frame, with no gap and no duplicate (events commit in seq order).
// At most cap(slots) streams are open at once; one more answers 503.
func streamEvents(service *migration.Service, waker Waker, slots streamSlots, counter *metrics.Metrics, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !slots.acquire() {
			writeText(w, http.StatusServiceUnavailable, "too many event streams")
			return
		}
		defer slots.release()
		query := r.URL.Query()
		taskID, after, live, ok := streamParams(w, query)
		if !ok {
			return
		}
		if query.Has("task_id") {
			if _, err := service.TaskState(r.Context(), taskID); err != nil {
				status, body := statusOf(err)
				writeText(w, status, body)
				return
			}
		}
		wake, unsubscribe := waker.Subscribe() // before the replay: nothing falls between
		defer unsubscribe()
		if live {
			// Read after subscribing: an event committed in between is
			// either at most this seq or wakes the stream.
			var err error
			if after, err = service.LatestEventSeq(r.Context()); err != nil {
				status, body := statusOf(err)
				writeText(w, status, body)
				return
			}
		}
		clearDeadlines(w)
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader answered the client
		}
		defer conn.Close()
		defer counter.StreamOpened()()
		s := &stream{conn: conn, service: service, taskID: taskID, last: after}
		if err := s.serve(r.Context(), wake); err != nil {
			logger.DebugContext(r.Context(), "event stream ended", "err", err)
		}
	}
}

// streamParams reads the stream's parameters, in a fixed order so that a
// request with several bad ones always gets the same answer.
func streamParams(w http.ResponseWriter, query url.Values) (taskID, after int64, live, ok bool) {
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"task_id", &taskID}, {"after", &after}} {
		text := query.Get(p.name)
		if text == "" {
			continue
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || v < 0 {
			writeText(w, http.StatusBadRequest, "bad "+p.name)
			return 0, 0, false, false
		}
		*p.dst = v
	}
	if text := query.Get("live"); text != "" {
		var err error
		if live, err = strconv.ParseBool(text); err != nil {
			writeText(w, http.StatusBadRequest, "bad live")
			return 0, 0, false, false
		}
	}
	return taskID, after, live, true
}

// stream is one client's live event stream.
type stream struct {
	conn    *websocket.Conn
	service *migration.Service
	taskID  int64
	last    int64 // seq of the last event sent
}

// serve sends what is stored, then what arrives, until the client leaves.
func (s *stream) serve(ctx context.Context, wake <-chan struct{}) error {
	gone := make(chan struct{})
	go s.readUntilGone(gone)
	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	if err := s.sendNew(ctx); err != nil {
		return err
	}
	for {
		select {
		case <-wake:
			if err := s.sendNew(ctx); err != nil {
				return err
			}
		case <-ping.C:
			if err := s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)); err != nil {
				return err
			}
		case <-gone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// readUntilGone reads (and drops) what the client sends, so that pongs and
// the close handshake are processed, and says when the client has gone.
func (s *stream) readUntilGone(gone chan<- struct{}) {
	defer close(gone)
	s.conn.SetReadLimit(maxClientMessageBytes)
	s.conn.SetReadDeadline(time.Now().Add(pongWait)) //nolint:errcheck // fails only on a closed conn
	s.conn.SetPongHandler(func(string) error {
		return s.conn.SetReadDeadline(time.Now().Add(pongWait))
	})
	for {
		if _, _, err := s.conn.ReadMessage(); err != nil {
			return
		}
	}
}

// sendNew sends every event after the last one sent.
func (s *stream) sendNew(ctx context.Context) error {
	for {
		events, err := s.service.Events(ctx, s.taskID, s.last, streamPage)
		if err != nil {
			return err
		}
		for _, e := range events {
			s.conn.SetWriteDeadline(time.Now().Add(writeWait)) //nolint:errcheck // WriteJSON reports it
			if err := s.conn.WriteJSON(eventToAPI(e)); err != nil {
				return err
			}
			s.last = e.Seq
		}
		if len(events) < streamPage {
			return nil
		}
	}
}

func eventToAPI(e migration.Event) api.Event {
	out := api.Event{
		Seq: e.Seq, Time: e.Time, Kind: api.EventKind(e.Kind), TaskId: e.TaskID, AccountId: e.AccountID,
		Side: e.Side, Login: e.Login, Host: e.Host, Port: e.Port, Error: e.Error, Message: e.Message,
		Folder: e.Folder,
	}
	if p := e.Progress; p != nil {
		out.FoldersTotal, out.FoldersDone, out.MessagesTotal = &p.FoldersTotal, &p.FoldersDone, &p.MessagesTotal
		out.MessagesCopied, out.MessagesSkipped, out.MessagesFailed = &p.MessagesCopied, &p.MessagesSkipped, &p.MessagesFailed
		out.BytesCopied = &p.BytesCopied
		if p.SourceCounted {
			out.SourceMessages, out.SourceBytes = &p.SourceMessages, &p.SourceBytes
		}
	}
	return out
}
