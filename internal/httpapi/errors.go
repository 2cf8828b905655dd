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

// statusOf is the one table from domain errors to HTTP. Errors it does not
// know are store failures: 500 with the error's own text, as the interface
// specifies.
func statusOf(err error) (int, string) {
	var (
		invalid   *migration.InvalidError
		importErr *migration.ImportError
		inUse     *migration.EndpointInUseError
		duplicate *migration.DuplicateLoginError
		tooLarge  *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, bodyTooLarge
	case errors.Is(err, migration.ErrNotFound):
		return http.StatusNotFound, "not found"
	case errors.Is(err, migration.ErrNoSchedule), errors.Is(err, migration.ErrNoPlan):
		return http.StatusNotFound, err.Error()
	case errors.As(err, &invalid):
		return http.StatusBadRequest, invalid.Error()
	case errors.As(err, &importErr):
		return http.StatusBadRequest, importErr.Error()
	case isConflict(err):
		return http.StatusConflict, err.Error()
	case errors.As(err, &inUse):
		return http.StatusConflict, inUse.Error()
	case errors.As(err, &duplicate):
		return http.StatusConflict, duplicate.Error()
	default:
		return http.StatusInternalServerError, err.Error()
	}
}

// conflicts are the refusals of a change that the state of a task, an
// account or an endpoint does not allow now.
var conflicts = []error{migration.ErrTaskRunning, migration.ErrNoAccounts, migration.ErrNoAccountSelected,
	migration.ErrTaskNotRunning, migration.ErrNoMigrationRunning, migration.ErrAccountRunning,
	migration.ErrAccountNotRunning, migration.ErrNoRunningAccountSelected, migration.ErrEndpointRunning, migration.ErrTestRunning,
	migration.ErrTaskPaused, migration.ErrTaskNotPaused, migration.ErrFinalPassRunning, migration.ErrPlanBlocked,
	migration.ErrNoMailServer}

func isConflict(err error) bool {
	for _, c := range conflicts {
		if errors.Is(err, c) {
			return true
		}
	}
	return false
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
