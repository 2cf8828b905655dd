package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"

	apispec "github.com/mailmigrate/mailmigrate/api"
)

// mountDocs serves the OpenAPI file as written and Swagger UI, whose assets
// are embedded in the binary: the docs work on a machine with no Internet.
func mountDocs(r chi.Router) {
	const specPath = BasePath + "/openapi.yaml"
	r.Get(specPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(apispec.OpenAPIYAML) //nolint:errcheck // the client went away
	})
	ui := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "mailmigrate API",
		SwaggerJSON: specPath,
		BasePath:    "/docs/",
	})
	r.Get("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently).ServeHTTP)
	r.Handle("/docs/*", ui)
}
