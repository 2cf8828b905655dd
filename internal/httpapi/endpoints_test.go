package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// passwordAuth is how the accounts of an endpoint created without auth
// log in: each with its own password.
var passwordAuth = api.EndpointAuth{Method: api.AuthMethodPassword, MasterForm: api.MasterFormAuthzid}

var oldServer = api.EndpointInput{RoleLabel: "old provider", Host: "imap.old.example", Port: 993, TlsMode: api.TLSModeSsl}

func (s *testService) createEndpoint(t *testing.T, in api.EndpointInput) int64 {
	t.Helper()
	resp, err := s.client.CreateEndpointWithResponse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != http.StatusCreated || resp.JSON201 == nil {
		t.Fatalf("create: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201.Id
}

func TestCreateEndpointAnswers201WithID(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	got := s.do(t, "POST", "/endpoints", `{"role_label":"old","host":"imap.old.example","port":993,"tls_mode":"ssl"}`)
	if got.status != http.StatusCreated || got.contentType != "application/json" {
		t.Fatalf("got %d %q %s", got.status, got.contentType, got.body)
	}
	var created map[string]any
	if err := json.Unmarshal([]byte(got.body), &created); err != nil {
		t.Fatal(err)
	}
	if len(created) != 1 || created["id"] == nil {
		t.Errorf("body %s, want exactly {\"id\": n}", got.body)
	}
}

func TestListEndpointsIsEmptyArrayThenIDOrder(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	got := s.do(t, "GET", "/endpoints", "")
	if got.status != http.StatusOK || strings.TrimSpace(got.body) != "[]" || got.contentType != "application/json" {
		t.Fatalf("empty list: %d %q %q", got.status, got.contentType, got.body)
	}
	var ids []int64
	for i, mode := range []api.TLSMode{api.TLSModeSsl, api.TLSModeStarttls, api.TLSModePlain} {
		ids = append(ids, s.createEndpoint(t, api.EndpointInput{Host: fmt.Sprintf("h%d", i), TlsMode: mode}))
	}
	resp, err := s.client.ListEndpointsWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	list := *resp.JSON200
	if len(list) != 3 {
		t.Fatalf("listed %d endpoints, want 3", len(list))
	}
	for i, e := range list {
		if e.Id != ids[i] || e.Host != fmt.Sprintf("h%d", i) {
			t.Errorf("entry %d = %+v, want id %d host h%d", i, e, ids[i], i)
		}
	}
}

func TestEndpointPortDefaultsToTheModes(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	for _, tc := range []struct {
		body string
		port int
	}{
		{`{"tls_mode":"ssl"}`, 993},
		{`{"tls_mode":"starttls","port":0}`, 143},
		{`{"tls_mode":"plain"}`, 143},
		{`{"tls_mode":"ssl","port":10993}`, 10993},
	} {
		var created api.Created
		got := s.do(t, "POST", "/endpoints", tc.body)
		if err := json.Unmarshal([]byte(got.body), &created); err != nil {
			t.Fatalf("%s: %d %s", tc.body, got.status, got.body)
		}
		e, err := s.client.GetEndpointWithResponse(context.Background(), created.Id)
		if err != nil {
			t.Fatal(err)
		}
		if e.JSON200.Port != tc.port {
			t.Errorf("%s: port %d, want %d", tc.body, e.JSON200.Port, tc.port)
		}
	}
}

func TestGetEndpointReturnsEveryField(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	limits := api.EndpointLimits{MaxMessageBytes: 150000000, DailyDownloadBytes: 1, DailyUploadBytes: 2, Connections: 4, AccountConnections: 3}
	sieve := api.EndpointSieve{Port: 4190, TlsMode: api.TLSModeSsl}
	in := api.EndpointInput{RoleLabel: "new", Host: "imap.new.example", Port: 143, TlsMode: api.TLSModeStarttls, TlsSkipVerify: true, Profile: api.ProfileExchange,
		Limits: &limits, Sieve: &sieve}
	id := s.createEndpoint(t, in)
	resp, err := s.client.GetEndpointWithResponse(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := api.Endpoint{Id: id, RoleLabel: "new", Host: "imap.new.example", Port: 143, TlsMode: api.TLSModeStarttls, TlsSkipVerify: true,
		Profile: api.ProfileExchange, Limits: limits, Auth: passwordAuth, Sieve: sieve}
	if resp.StatusCode() != http.StatusOK || *resp.JSON200 != want {
		t.Errorf("got %d %+v, want %+v", resp.StatusCode(), resp.JSON200, want)
	}
}

func TestUpdateEndpointReplacesTheWholeRecord(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	id := s.createEndpoint(t, api.EndpointInput{RoleLabel: "old", Host: "a.example", Port: 1993, TlsMode: api.TLSModeSsl, TlsSkipVerify: true})
	other := s.createEndpoint(t, oldServer)

	// The body's id is overridden by the path's; omitted fields are cleared.
	body := fmt.Sprintf(`{"id":%d,"host":"b.example","tls_mode":"starttls"}`, other)
	got := s.do(t, "PUT", fmt.Sprintf("/endpoints/%d", id), body)
	if got.status != http.StatusNoContent || got.body != "" {
		t.Fatalf("PUT: %d %q", got.status, got.body)
	}
	resp, _ := s.client.GetEndpointWithResponse(context.Background(), id)
	want := api.Endpoint{Id: id, Host: "b.example", Port: 143, TlsMode: api.TLSModeStarttls, Profile: api.ProfileAuto, Auth: passwordAuth,
		Sieve: api.EndpointSieve{TlsMode: api.TLSModeStarttls}}
	if *resp.JSON200 != want {
		t.Errorf("after PUT: %+v, want %+v", *resp.JSON200, want)
	}
	if got := s.do(t, "PUT", fmt.Sprintf("/endpoints/%d", id), `{"host":"b.example","tls_mode":"ssl","profile":"yahoo"}`); got.status != http.StatusBadRequest ||
		!strings.Contains(got.body, "profile") {
		t.Errorf("PUT with an unknown profile: %d %q, want 400 naming the field", got.status, got.body)
	}
	for body, field := range map[string]string{
		`{"host":"b.example","tls_mode":"ssl","limits":{"connections":-1}}`:              "connections",
		`{"host":"b.example","tls_mode":"ssl","limits":{"daily_upload_bytes":-5}}`:       "daily_upload_bytes",
		`{"host":"b.example","tls_mode":"ssl","limits":{"account_connections":1000000}}`: "account_connections",
	} {
		if got := s.do(t, "PUT", fmt.Sprintf("/endpoints/%d", id), body); got.status != http.StatusBadRequest || !strings.Contains(got.body, field) {
			t.Errorf("PUT %s: %d %q, want 400 naming %s", body, got.status, got.body, field)
		}
	}
	untouched, _ := s.client.GetEndpointWithResponse(context.Background(), other)
	if untouched.JSON200.Host != oldServer.Host {
		t.Errorf("PUT with a body id changed endpoint %d: %+v", other, *untouched.JSON200)
	}
}

// TestEndpointOfARunningTaskCannotChange: the accounts of a running task
// connect as they start, so a change would send some of them to the new
// server; both the source and the destination are held, in every running
// state, and free again once the task is not running.
func TestEndpointOfARunningTaskCannotChange(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, sourceID, destinationID := s.newTask(t)
	body := `{"host":"elsewhere.example","tls_mode":"ssl"}`
	for _, state := range migration.RunningTaskStates {
		s.setTaskState(t, taskID, state)
		for _, id := range []int64{sourceID, destinationID} {
			wantText(t, s.do(t, "PUT", fmt.Sprintf("/endpoints/%d", id), body), http.StatusConflict, "endpoint is used by a running task")
		}
	}
	for _, id := range []int64{sourceID, destinationID} {
		resp, _ := s.client.GetEndpointWithResponse(context.Background(), id)
		if resp.JSON200 == nil || resp.JSON200.Host == "elsewhere.example" {
			t.Fatalf("a refused PUT changed endpoint %d: %s", id, resp.Body)
		}
	}
	s.setTaskState(t, taskID, migration.TaskCompleted)
	if got := s.do(t, "PUT", fmt.Sprintf("/endpoints/%d", sourceID), body); got.status != http.StatusNoContent {
		t.Errorf("PUT once the task ended: %d %s", got.status, got.body)
	}
}

func TestDeleteEndpoint(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	id := s.createEndpoint(t, oldServer)
	resp, err := s.client.DeleteEndpointWithResponse(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.StatusCode(), resp.Body)
	}
	wantText(t, s.do(t, "DELETE", fmt.Sprintf("/endpoints/%d", id), ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "GET", fmt.Sprintf("/endpoints/%d", id), ""), http.StatusNotFound, "not found")
}

func TestMissingEndpointIsNotFound(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	valid := `{"tls_mode":"ssl"}`
	for _, id := range []string{"0", "-1", "999999", "9223372036854775807"} {
		wantText(t, s.do(t, "GET", "/endpoints/"+id, ""), http.StatusNotFound, "not found")
		wantText(t, s.do(t, "PUT", "/endpoints/"+id, valid), http.StatusNotFound, "not found")
		wantText(t, s.do(t, "DELETE", "/endpoints/"+id, ""), http.StatusNotFound, "not found")
	}
}

func TestBadIDIs400(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	for _, id := range []string{"1x", "abc", "1.5", "99999999999999999999", "%20"} {
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			wantText(t, s.do(t, method, "/endpoints/"+id, `{"tls_mode":"ssl"}`), http.StatusBadRequest, "bad id")
		}
	}
	// The id is checked before the body.
	wantText(t, s.do(t, "PUT", "/endpoints/1x", `not json`), http.StatusBadRequest, "bad id")
}

func TestBadJSONIs400(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	id := s.createEndpoint(t, oldServer)
	bodies := map[string]string{
		"syntax":          `{"tls_mode":`,
		"not json":        `tls_mode=ssl`,
		"empty":           ``,
		"array":           `[{"tls_mode":"ssl"}]`,
		"string":          `"ssl"`,
		"number":          `1`,
		"null":            `null`,
		"trailing data":   `{"tls_mode":"ssl"} {}`,
		"port as string":  `{"tls_mode":"ssl","port":"993"}`,
		"port fraction":   `{"tls_mode":"ssl","port":99.5}`,
		"port overflow":   `{"tls_mode":"ssl","port":1e40}`,
		"host as number":  `{"tls_mode":"ssl","host":5}`,
		"tls_mode object": `{"tls_mode":{}}`,
		"skip as string":  `{"tls_mode":"ssl","tls_skip_verify":"yes"}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			wantText(t, s.do(t, "POST", "/endpoints", body), http.StatusBadRequest, "bad json")
			wantText(t, s.do(t, "PUT", fmt.Sprintf("/endpoints/%d", id), body), http.StatusBadRequest, "bad json")
		})
	}
	// Nothing was stored or changed by any of them.
	resp, _ := s.client.ListEndpointsWithResponse(context.Background())
	if len(*resp.JSON200) != 1 || (*resp.JSON200)[0].Host != oldServer.Host {
		t.Errorf("bad requests changed the store: %+v", *resp.JSON200)
	}
}

func TestTLSModeIsValidated(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	id := s.createEndpoint(t, oldServer)
	for _, body := range []string{`{}`, `{"tls_mode":""}`, `{"tls_mode":"SSL"}`, `{"tls_mode":"tls"}`, `{"host":"h","tls_mode":null}`} {
		wantText(t, s.do(t, "POST", "/endpoints", body), http.StatusBadRequest, "tls_mode must be ssl|starttls|plain")
		wantText(t, s.do(t, "PUT", fmt.Sprintf("/endpoints/%d", id), body), http.StatusBadRequest, "tls_mode must be ssl|starttls|plain")
	}
}

func TestFieldBoundsAre400(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	long := strings.Repeat("a", 254)
	for body, want := range map[string]string{
		`{"tls_mode":"ssl","port":65536}`:                                            "port must be between 1 and 65535, or 0 for the default of tls_mode",
		`{"tls_mode":"ssl","port":-1}`:                                               "port must be between 1 and 65535, or 0 for the default of tls_mode",
		`{"tls_mode":"ssl","host":"` + long + `"}`:                                   "host must be at most 253 bytes",
		`{"tls_mode":"ssl","role_label":"` + long + long + long + long + long + `"}`: "role_label must be at most 1024 bytes",
	} {
		wantText(t, s.do(t, "POST", "/endpoints", body), http.StatusBadRequest, want)
	}
}

func TestOversizedBodyIs413(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	big := `{"tls_mode":"ssl","role_label":"` + strings.Repeat("x", 1<<20) + `"}`
	wantText(t, s.do(t, "POST", "/endpoints", big), http.StatusRequestEntityTooLarge, "request body too large")
	wantText(t, s.do(t, "PUT", "/endpoints/1", big), http.StatusRequestEntityTooLarge, "request body too large")

	// Without a Content-Length (chunked), the limit still holds.
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(big))
		pw.Close()
	}()
	resp, err := http.Post(s.api+"/endpoints", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked oversized body: %d, want 413", resp.StatusCode)
	}
}

func TestStoreFailureIs500WithTheStoreError(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	s.pool.Close()
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/endpoints", `{"tls_mode":"ssl"}`},
		{"GET", "/endpoints", ""},
		{"GET", "/endpoints/1", ""},
		{"PUT", "/endpoints/1", `{"tls_mode":"ssl"}`},
		{"DELETE", "/endpoints/1", ""},
	} {
		wantText(t, s.do(t, tc.method, tc.path, tc.body), http.StatusInternalServerError, "closed pool")
	}
}

func TestConcurrentCreatesGetDistinctIDs(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	const n = 40
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := s.client.CreateEndpointWithResponse(context.Background(), api.EndpointInput{Host: fmt.Sprint(i), TlsMode: api.TLSModePlain})
			if err != nil || resp.JSON201 == nil {
				t.Errorf("create %d: %v %v", i, err, resp)
				return
			}
			ids[i] = resp.JSON201.Id
		})
	}
	wg.Wait()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for i := 1; i < n; i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("id %d handed out twice", ids[i])
		}
	}
}
