// Package web is mailmigrate's browser front end: one HTML page, plain ES
// modules and a style sheet, embedded in the binary so that the service
// needs no build step, no Node and no Internet access to show it. The page
// talks to the REST API and the event WebSocket like any other client.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// AssetPrefix is where the page's scripts and style sheet are served.
const AssetPrefix = "/assets/"

//go:embed assets
var assetFiles embed.FS

// Handler serves the page at / and its files under AssetPrefix. Any other
// path goes to notFound: the router's, so a mistyped URL looks the same
// wherever it lands.
func Handler(notFound http.Handler) http.Handler {
	assets, err := fs.Sub(assetFiles, "assets")
	if err != nil {
		panic(err) // the directory is embedded at compile time
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := assetName(r.URL.Path)
		if !ok || !exists(assets, name) {
			notFound.ServeHTTP(w, r)
			return
		}
		// Embedded files carry no modification time: without this a browser
		// could keep the previous release's script after an upgrade.
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, assets, name)
	})
}

// assetName maps a request path to a file in assets: the page itself at
// /, a file directly under AssetPrefix otherwise.
func assetName(urlPath string) (string, bool) {
	if urlPath == "/" {
		return "index.html", true
	}
	name, ok := strings.CutPrefix(urlPath, AssetPrefix)
	if !ok || name == "" || name == "index.html" || path.Clean(name) != name || strings.Contains(name, "/") {
		return "", false
	}
	return name, true
}

func exists(assets fs.FS, name string) bool {
	info, err := fs.Stat(assets, name)
	return err == nil && !info.IsDir()
}
