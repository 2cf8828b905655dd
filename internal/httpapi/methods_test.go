package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/httpapi"
)

// TestEveryRouteNamesItsMethodsAndAnswersHEAD: a method a path does not
// have answers 405 with the Allow header listing those it has (RFC 9110
// §15.5.6), and HEAD answers wherever GET does, with GET's status and
// headers and no body; for every operation of the OpenAPI file and the
// open routes.
func TestEveryRouteNamesItsMethodsAndAnswersHEAD(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	methods := map[string][]string{ // by URL
		s.url + "/healthz": {"GET"}, s.url + "/readyz": {"GET"}, s.url + "/": {"GET"},
		s.url + "/docs/": {"GET"}, s.url + httpapi.BasePath + "/openapi.yaml": {"GET"},
	}
	for _, r := range specRoutes(t) {
		url := s.url + httpapi.BasePath + r.path
		methods[url] = append(methods[url], r.method)
	}
	send := func(method, url string) reply {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.token)
		return send(t, req)
	}
	for url, has := range methods {
		var want []string
		for _, m := range has {
			want = append(want, m)
			if m == "GET" {
				want = append(want, "HEAD")
			}
		}
		slices.Sort(want)
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if slices.Contains(has, m) {
				continue
			}
			got := send(m, url)
			allow := strings.Split(got.header.Get("Allow"), ", ")
			slices.Sort(allow)
			if got.status != http.StatusMethodNotAllowed || !slices.Equal(allow, want) {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow %s", m, url, got.status, got.header.Get("Allow"), strings.Join(want, ", "))
			}
		}
		if !slices.Contains(has, "GET") {
			continue
		}
		get, head := send("GET", url), send("HEAD", url)
		if head.status != get.status || head.contentType != get.contentType || head.body != "" {
			t.Errorf("HEAD %s: %d %q with %d bytes of body; GET: %d %q", url, head.status, head.contentType, len(head.body), get.status, get.contentType)
		}
	}
}
