package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// exposeRequestID returns the request id to the client, so that a report
// of a failed request can be matched to the server's log line.
func exposeRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(middleware.RequestIDHeader, middleware.GetReqID(r.Context()))
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panic into a plain 500 that carries no stack trace.
func recoverPanics(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler {
					panic(p) // net/http's way to abort a response; it logs nothing
				}
				logger.ErrorContext(r.Context(), "panic in handler", "panic", p,
					"request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path)
				writeText(w, http.StatusInternalServerError, "internal error")
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// logRequests writes one line per request.
func logRequests(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := statusWriter(w, r)
			next.ServeHTTP(ww, r)
			logger.InfoContext(r.Context(), "request",
				"method", r.Method, "path", r.URL.Path, "status", ww.Status(),
				"bytes", ww.BytesWritten(), "duration", time.Since(start),
				"request_id", middleware.GetReqID(r.Context()))
		})
	}
}

// statusWriter is w able to tell the status and size of the answer: the
// wrapper an outer middleware (the metrics, the log) made, when there is
// one, else a new one.
func statusWriter(w http.ResponseWriter, r *http.Request) middleware.WrapResponseWriter {
	if ww, wrapped := w.(middleware.WrapResponseWriter); wrapped {
		return ww
	}
	return middleware.NewWrapResponseWriter(w, r.ProtoMajor)
}

// bodyNotJSONContentType answers a JSON body sent as another media type.
const bodyNotJSONContentType = "Content-Type must be application/json"

// checkJSONBody enforces the body rules every JSON operation shares before
// the generated server decodes it: at most limits.MaxJSONBodyBytes (413), a
// well-formed JSON object with nothing after it (400 "bad json"), sent as
// application/json (415). The
// generated decoder alone would accept `{"a":1} trailing` and `null`.
// The CSV import gets its own, larger limit and passes unchecked, whatever
// its Content-Type (curl's --data-binary says form-urlencoded).
func checkJSONBody(limits Limits) api.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch {
				next.ServeHTTP(w, r)
				return
			}
			if strings.HasSuffix(r.URL.Path, "/accounts/import") {
				r.Body = http.MaxBytesReader(w, r.Body, limits.MaxCSVBodyBytes)
				next.ServeHTTP(w, r)
				return
			}
			body, ok := readJSONBody(w, r, limits.MaxJSONBodyBytes)
			if !ok {
				return
			}
			// A JSON body says so: a browser sends a text/plain or form
			// body to another site without asking it first (no CORS
			// preflight), but never an application/json one.
			if len(body) > 0 && !isJSONContentType(r.Header.Get("Content-Type")) {
				writeText(w, http.StatusUnsupportedMediaType, bodyNotJSONContentType)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// readJSONBody reads a body of at most maxBytes that is a JSON object (or
// empty) whose strings are valid UTF-8, or answers 413 or 400.
func readJSONBody(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, bool) {
	if r.ContentLength > maxBytes {
		writeText(w, http.StatusRequestEntityTooLarge, bodyTooLarge)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	switch {
	case err != nil:
		writeText(w, http.StatusBadRequest, bodyBadJSON)
		return nil, false
	case int64(len(body)) > maxBytes:
		writeText(w, http.StatusRequestEntityTooLarge, bodyTooLarge)
		return nil, false
	case len(body) > 0 && !isJSONObject(body):
		writeText(w, http.StatusBadRequest, bodyBadJSON)
		return nil, false
	}
	if field, found := invalidUTF8Field(body); found {
		writeText(w, http.StatusBadRequest, field+" must be valid UTF-8")
		return nil, false
	}
	return body, true
}

// isJSONContentType reports whether a Content-Type header names
// application/json (parameters such as charset aside).
func isJSONContentType(header string) bool {
	mediaType, _, err := mime.ParseMediaType(header)
	return err == nil && mediaType == "application/json"
}

func isJSONObject(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(body)
}
