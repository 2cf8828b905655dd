package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// The plain-text bodies the interface specifies to the letter.
const (
	bodyBadJSON  = "bad json"
	bodyBadID    = "bad id"
	bodyTooLarge = "request body too large"
)

// statusByKind is the one table from the domain's kinds of error to
// HTTP. An error without a kind is a store failure: 500 with the error's
// own text, as the interface specifies.
var statusByKind = map[migration.ErrorKind]int{
	migration.KindInvalid:         http.StatusBadRequest,
	migration.KindNotFound:        http.StatusNotFound,
	migration.KindForbidden:       http.StatusForbidden,
	migration.KindUnauthenticated: http.StatusUnauthorized,
	migration.KindConflict:        http.StatusConflict,
	migration.KindUnavailable:     http.StatusServiceUnavailable,
	migration.KindInternal:        http.StatusInternalServerError,
}

// statusOf is the status and plain-text body that answer err.
func statusOf(err error) (int, string) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return http.StatusRequestEntityTooLarge, bodyTooLarge
	}
	kind, told := migration.KindOf(err)
	return statusByKind[kind], told.Error()
}

// responseErrorHandler answers for errors that handlers return.
func responseErrorHandler(logger *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		status, body := statusOf(err)
		if status >= 500 {
			logger.ErrorContext(r.Context(), "request failed", "err", err,
				"request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path)
		}
		writeText(w, status, body)
	}
}

// requestErrorHandler answers for bodies the generated server cannot decode
// (checkJSONBody has already turned away malformed JSON and oversized
// bodies; what reaches here is JSON of the wrong shape, e.g. a string port).
func requestErrorHandler(logger *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		logger.DebugContext(r.Context(), "undecodable request body", "err", err)
		writeText(w, http.StatusBadRequest, bodyBadJSON)
	}
}

// paramErrorHandler answers for path and query parameters that do not bind,
// such as a non-integer or out-of-range id.
func paramErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	var paramErr *api.InvalidParamFormatError
	if errors.As(err, &paramErr) && paramErr.ParamName != "id" && paramErr.ParamName != "accountId" {
		writeText(w, http.StatusBadRequest, "bad "+paramErr.ParamName)
		return
	}
	writeText(w, http.StatusBadRequest, bodyBadID)
}

// writeText sends a plain-text response: every error body of the API.
func writeText(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8") // nosniff: securityHeaders
	w.WriteHeader(status)
	w.Write([]byte(body)) //nolint:errcheck // the client went away
}
