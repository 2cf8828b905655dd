package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// scrape returns the value of each series of /metrics, keyed by its name
// and labels as printed, e.g. `mailmigrate_accounts{state="completed"}`.
func scrape(t *testing.T, s *servicetest.Service) map[string]float64 {
	t.Helper()
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, body)
	}
	series := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		series[line[:i]] = v
	}
	return series
}

// TestMetricsMoveWithARun runs a task of two accounts, one with a wrong
// password, and checks that /metrics counts what happened: requests by
// route, messages and bytes copied as the accounts say, the failed login
// by side and kind, accounts by state, and an open event stream.
func TestMetricsMoveWithARun(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	users := map[string]string{"alice": "a", "bob": "b"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 40}))
	before := scrape(t, s)
	if before["mailmigrate_messages_copied_total"] != 0 || before["mailmigrate_websocket_clients"] != 0 {
		t.Fatalf("a fresh service counts copies or streams: %v", before)
	}

	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "alice,a\nbob,wrong\n")
	conn, _, err := websocket.DefaultDialer.Dial(fmt.Sprintf("ws%s/events/ws?task_id=%d", strings.TrimPrefix(s.API, "http"), taskID), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)
	accounts, _ := s.Client.ListAccountsWithResponse(ctx, taskID, nil)
	alice := (*accounts.JSON200)[0]

	after := scrape(t, s)
	for series, want := range map[string]float64{
		"mailmigrate_messages_copied_total":                                                          float64(alice.Progress.MessagesCopied),
		"mailmigrate_bytes_copied_total":                                                             float64(alice.Progress.BytesCopied),
		`mailmigrate_imap_errors_total{kind="auth",side="source"}`:                                   1,
		`mailmigrate_accounts{state="completed"}`:                                                    1,
		`mailmigrate_accounts{state="failed"}`:                                                       1,
		`mailmigrate_http_requests_total{method="POST",route="/api/v1/tasks/{id}/run",status="202"}`: 1,
		"mailmigrate_websocket_clients":                                                              1,
	} {
		if after[series] != want {
			t.Errorf("%s = %v, want %v", series, after[series], want)
		}
	}
	if alice.Progress.MessagesCopied == 0 {
		t.Error("alice copied nothing")
	}
}
