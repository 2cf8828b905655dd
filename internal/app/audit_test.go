package app_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestAuditTrail: every request that changes something, or tried to, is
// in the trail with whose token let it in, from where, what it asked and
// how it ended: a refused one without a token, a cross-site one, a
// conflict. Reads are not; no password and no token is in the trail, in
// the API or the CSV; entries older than the retention go.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	const token, masterPassword = "audit-trail-test-token-0123456789", "Master-Pw-7f3a9"
	s := servicetest.Start(t, servicetest.Options{APIToken: token})
	ctx := context.Background()
	created, err := s.Client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: "imap.old.example", Port: 143, TlsMode: api.TLSModePlain,
		Auth: &api.EndpointAuthInput{Method: api.AuthMethodMaster, MasterLogin: "admin", MasterPassword: masterPassword}})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create endpoint: %v %v", err, created)
	}
	id := created.JSON201.Id
	if _, err := s.Client.ListEndpointsWithResponse(ctx); err != nil { // a read: not in the trail
		t.Fatal(err)
	}
	post := func(path, body string, header http.Header) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.API+path, strings.NewReader(body))
		req.Header = header
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post("/tasks", `{"name":"x"}`, http.Header{}); status != http.StatusUnauthorized {
		t.Fatalf("a request without a token: %d", status)
	}
	if status := post("/endpoints", `{}`, http.Header{"Authorization": {"Bearer " + token}, "Origin": {"http://evil.example"},
		"Sec-Fetch-Site": {"cross-site"}}); status != http.StatusForbidden {
		t.Fatalf("a cross-site request: %d", status)
	}
	createTask(t, s, id, createEndpoint(t, s, "imap.new.example", 143), "")
	if resp, err := s.Client.DeleteEndpointWithResponse(ctx, id); err != nil || resp.StatusCode() != http.StatusConflict {
		t.Fatalf("deleting an endpoint a task uses: %v %v", err, resp)
	}

	trail, err := s.Client.ListAuditWithResponse(ctx, &api.ListAuditParams{})
	if err != nil || trail.JSON200 == nil {
		t.Fatalf("audit: %v %v", err, trail)
	}
	type seen struct{ actor, method, route, what, outcome string }
	var got []seen
	for _, e := range *trail.JSON200 {
		got = append(got, seen{e.Actor, e.Method, e.Route, e.What, e.Outcome})
		if e.Remote != "127.0.0.1" || e.RequestId == "" || e.At.IsZero() || time.Since(e.At) > time.Minute {
			t.Errorf("entry %+v: want this client's address, a request id and a time", e)
		}
	}
	holder := "the API token configured (MAILMIGRATE_API_TOKEN)"
	want := []seen{ // newest first
		{holder, "DELETE", "/api/v1/endpoints/{id}", "Delete an endpoint that no task uses.", "refused (409 Conflict)"},
		{holder, "POST", "/api/v1/tasks", "Create a migration task between two endpoints.", "done (201 Created)"},
		{holder, "POST", "/api/v1/endpoints", "Register an IMAP server.", "done (201 Created)"},
		{"", "POST", "", "", "refused (403 Forbidden)"}, // refused before its token was looked at
		{"", "POST", "", "", "refused (401 Unauthorized)"},
		{holder, "POST", "/api/v1/endpoints", "Register an IMAP server.", "done (201 Created)"},
	}
	if len(got) != len(want) {
		t.Fatalf("the trail holds %d entries, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	report, err := s.Client.GetAuditCSVWithResponse(ctx)
	if err != nil || report.StatusCode() != http.StatusOK {
		t.Fatalf("audit.csv: %v %v", err, report)
	}
	rows, err := csv.NewReader(strings.NewReader(string(report.Body))).ReadAll()
	if err != nil || len(rows) != len(want)+1 || strings.Join(rows[0], ",") != "id,at,actor,remote,method,route,what,path,status,outcome,request_id" {
		t.Fatalf("audit.csv: %v\n%s", err, report.Body)
	}
	for _, text := range []string{string(report.Body), string(trail.Body)} {
		if strings.Contains(text, masterPassword) || strings.Contains(text, token) {
			t.Errorf("the trail holds a secret:\n%s", text)
		}
	}

	// Entries older than the retention go; the others stay.
	if _, err := s.Pool.Exec(ctx, `UPDATE audit_log SET at = now() - interval '200 days' WHERE id = (SELECT min(id) FROM audit_log)`); err != nil {
		t.Fatal(err)
	}
	if n, err := s.App.Store.AuditPrune(ctx, 180*24*time.Hour); err != nil || n != 1 {
		t.Fatalf("pruned %d entries (%v), want the one older than 180 days", n, err)
	}
	after, err := s.Client.ListAuditWithResponse(ctx, &api.ListAuditParams{})
	if err != nil || after.JSON200 == nil || len(*after.JSON200) != len(want)-1 || (*after.JSON200)[len(want)-2].Id != (*trail.JSON200)[len(want)-2].Id {
		t.Fatalf("after pruning the oldest entry: %v %s", err, after.Body)
	}
}
