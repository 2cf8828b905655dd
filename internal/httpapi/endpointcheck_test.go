package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// TestEndpointCheck: a saved endpoint on a self-signed Dovecot is told
// what is wrong and what to do; accepting any certificate makes it work;
// an unsaved endpoint is checked as the form holds it.
func TestEndpointCheck(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash})
	id := s.createEndpoint(t, api.EndpointInput{Host: d.Host, Port: d.TLSPort, TlsMode: api.TLSModeSsl})
	check := func(got reply) api.EndpointCheck {
		t.Helper()
		var c api.EndpointCheck
		if got.status != http.StatusOK || json.Unmarshal([]byte(got.body), &c) != nil {
			t.Fatalf("check: %d %s", got.status, got.body)
		}
		return c
	}

	c := check(s.do(t, "POST", fmt.Sprintf("/endpoints/%d/check", id), ""))
	if c.Ok || c.ProblemKind != api.EndpointProblemUntrustedCertificate || c.Address != d.TLSAddr() ||
		!strings.Contains(c.Advice, `"Accept any certificate"`) || c.Tls == nil || c.Tls.Verified || c.Tls.Subject != "localhost" {
		t.Errorf("self-signed: %+v", c)
	}

	if resp, err := s.client.UpdateEndpointWithResponse(context.Background(), id,
		api.EndpointInput{Host: d.Host, Port: d.TLSPort, TlsMode: api.TLSModeSsl, TlsSkipVerify: true}); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("accept any certificate: %v %v", err, resp)
	}
	c = check(s.do(t, "POST", fmt.Sprintf("/endpoints/%d/check", id), ""))
	if !c.Ok || c.ProblemKind != api.EndpointProblemNone || c.Problem != "" || !slices.Contains(c.Capabilities, "IMAP4rev1") ||
		!slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "not verified") }) {
		t.Errorf("accepting any certificate: %+v", c)
	}

	c = check(s.do(t, "POST", "/endpoint-checks", fmt.Sprintf(`{"host":%q,"port":%d,"tls_mode":"plain"}`, d.Host, d.TLSPort)))
	if c.Ok || c.ProblemKind != api.EndpointProblemTlsExpected || c.Advice != "Choose ssl as the TLS mode for this port." {
		t.Errorf("plain on the ssl port: %+v", c)
	}
	wantText(t, s.do(t, "POST", "/endpoint-checks", `{"host":"h","tls_mode":"tls"}`), http.StatusBadRequest, "tls_mode must be ssl|starttls|plain")
	wantText(t, s.do(t, "POST", "/endpoints/999999/check", ""), http.StatusNotFound, "not found")
}

// TestCheckOfAFormWithHalfALogin: "Test connection" checks the server
// while the login settings are still being filled in.
func TestCheckOfAFormWithHalfALogin(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	got := s.do(t, "POST", "/endpoint-checks", `{"host":"127.0.0.1","port":1,"tls_mode":"plain","auth":{"method":"oauth2","oauth2":{"provider":"google"}}}`)
	if got.status != http.StatusOK || !strings.Contains(got.body, `"problem_kind":"refused"`) {
		t.Errorf("a check with the OAuth 2.0 settings half filled in: %v", got)
	}
	wantText(t, s.do(t, "POST", "/endpoint-checks", `{"host":"h","tls_mode":"tls","auth":{"method":"oauth2"}}`), http.StatusBadRequest, "tls_mode must be ssl|starttls|plain")
}
