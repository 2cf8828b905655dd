package httpapi

import (
	"embed"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"

	apispec "github.com/mailmigrate/mailmigrate/api"
)

// specPath is where the OpenAPI file is served.
const specPath = BasePath + "/openapi.yaml"

// docsPage is our own Swagger UI page and its start-up script: swgui's
// page starts Swagger UI from inline script, which the docs'
// Content-Security-Policy forbids.
//
//go:embed docs
var docsPage embed.FS

// mountDocs serves the OpenAPI file as written and Swagger UI, whose assets
// are embedded in the binary: the docs work on a machine with no Internet.
func mountDocs(r chi.Router) {
	r.Get(specPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(apispec.OpenAPIYAML) //nolint:errcheck // the client went away
	})
	assets := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "mailmigrate API",
		SwaggerJSON: specPath,
		BasePath:    "/docs/",
	})
	page := http.FileServerFS(docsPage)
	r.Get("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently).ServeHTTP)
	r.Get("/docs/", page.ServeHTTP)
	r.Get("/docs/mailmigrate-docs.js", page.ServeHTTP)
	r.Get("/docs/mailmigrate-docs.css", page.ServeHTTP)
	r.Get("/docs/*", assets.ServeHTTP)
}
