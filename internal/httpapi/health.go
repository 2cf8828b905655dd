package httpapi

import (
	"context"
	"log/slog"
	"net/http"
)

// healthz answers while the process serves HTTP at all.
func healthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

// readyz answers 200 when ready reports no error, else 503 with its reason.
func readyz(ready func(context.Context) error, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ready != nil {
			if err := ready(r.Context()); err != nil {
				logger.WarnContext(r.Context(), "not ready", "err", err)
				writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
				return
			}
		}
		writeText(w, http.StatusOK, "ready")
	}
}
