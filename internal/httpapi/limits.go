package httpapi

import (
	"net/http"
	"time"
)

// Limits bound what one request or client may take (docs/design.md#limits). Zero
// fields take the defaults below. The lengths of text fields and the rows
// of a CSV file are the domain's rules (internal/migration).
type Limits struct {
	// MaxJSONBodyBytes caps a JSON request body (413 above).
	MaxJSONBodyBytes int64
	// MaxCSVBodyBytes caps an imported CSV file (413 above).
	MaxCSVBodyBytes int64
	// MaxEventStreams caps the live event streams open at once; one more
	// is refused with 503 before the WebSocket upgrade.
	MaxEventStreams int
	// ReadTimeout bounds reading a whole request, body included, and
	// WriteTimeout bounds a request from its start to the end of its
	// response: both on every route but the event stream, which lives as
	// long as its client and keeps its own ping and write deadlines.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
}

// The default limits.
const (
	DefaultMaxJSONBodyBytes = 1 << 20
	DefaultMaxCSVBodyBytes  = 32 << 20
	DefaultMaxEventStreams  = 256
	// A 32 MiB file takes two minutes at about 2 Mbit/s; give slow links
	// more than that.
	DefaultReadTimeout  = 5 * time.Minute
	DefaultWriteTimeout = 5 * time.Minute
)

// withDefaults fills in the zero fields.
func (l Limits) withDefaults() Limits {
	if l.MaxJSONBodyBytes <= 0 {
		l.MaxJSONBodyBytes = DefaultMaxJSONBodyBytes
	}
	if l.MaxCSVBodyBytes <= 0 {
		l.MaxCSVBodyBytes = DefaultMaxCSVBodyBytes
	}
	if l.MaxEventStreams <= 0 {
		l.MaxEventStreams = DefaultMaxEventStreams
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	return l
}

// requestDeadlines gives every request a deadline to be read and one to
// be answered: a client that trickles its body or does not read the
// response cannot hold a connection and a goroutine forever. They are set
// per request (not as http.Server's ReadTimeout and WriteTimeout) because
// the event stream must outlive them: it clears them (clearDeadlines).
func requestDeadlines(limits Limits) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			now := time.Now()
			rc.SetReadDeadline(now.Add(limits.ReadTimeout))   //nolint:errcheck // unsupported only by test recorders
			rc.SetWriteDeadline(now.Add(limits.WriteTimeout)) //nolint:errcheck // as above
			next.ServeHTTP(w, r)
		})
	}
}

// clearDeadlines lifts requestDeadlines for a request that lives as long
// as its client, such as the event stream, which keeps its own.
func clearDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})  //nolint:errcheck // unsupported only by test recorders
	rc.SetWriteDeadline(time.Time{}) //nolint:errcheck // as above
}

// streamSlots caps the event streams open at once.
type streamSlots chan struct{}

// acquire takes a slot, or reports that none is free.
func (s streamSlots) acquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s streamSlots) release() { <-s }
