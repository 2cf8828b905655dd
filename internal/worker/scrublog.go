package worker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// scrubbingHandler hands on the records the copy engine logs for a job
// with the job's secrets scrubbed (secret.Scrub): their message and every
// string, error or Stringer attribute, in groups too. A server that echoes
// a command in its words reaches the log through the engine's reconnects
// and warnings, as it reaches an account's error.
type scrubbingHandler struct {
	inner slog.Handler
	known []string
}

// scrubbedLogger is logger, scrubbed of known.
func scrubbedLogger(logger *slog.Logger, known []string) *slog.Logger {
	return slog.New(scrubbingHandler{inner: logger.Handler(), known: known})
}

func (h scrubbingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h scrubbingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, secret.Scrub(r.Message, h.known...), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.scrub(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h scrubbingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = h.scrub(a)
	}
	return scrubbingHandler{inner: h.inner.WithAttrs(scrubbed), known: h.known}
}

func (h scrubbingHandler) WithGroup(name string) slog.Handler {
	return scrubbingHandler{inner: h.inner.WithGroup(name), known: h.known}
}

// scrub is a with its text scrubbed; numbers, times and the like as they are.
func (h scrubbingHandler) scrub(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, secret.Scrub(v.String(), h.known...))
	case slog.KindGroup:
		group := v.Group()
		scrubbed := make([]any, len(group))
		for i, g := range group {
			scrubbed[i] = h.scrub(g)
		}
		return slog.Group(a.Key, scrubbed...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, secret.Scrub(x.Error(), h.known...))
		case fmt.Stringer:
			return slog.String(a.Key, secret.Scrub(x.String(), h.known...))
		case []byte:
			return slog.String(a.Key, secret.Scrub(string(x), h.known...))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
