package app_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// BenchmarkHandOff measures what an account waiting for a slot costs in
// time: with one account at a time, the gap between one account's
// account.done and the next one's account.started, through the service
// (admission, the job queue's notification, a worker's start).
func BenchmarkHandOff(b *testing.B) {
	const accounts = 20
	s := servicetest.Start(b, servicetest.Options{})
	users := map[string]string{}
	var csv strings.Builder
	for i := range accounts {
		login := fmt.Sprintf("user%02d", i)
		users[login] = "pw"
		fmt.Fprintf(&csv, "%s,pw\n", login)
	}
	old := imaptest.StartDovecot(b, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(b, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	for login := range users {
		old.Load(b, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 1}))
	}
	taskID := createTask(b, s, createEndpoint(b, s, old.Host, old.Port), createEndpoint(b, s, neu.Host, neu.Port), `{"parallel_accounts": 1}`)
	importAccounts(b, s, taskID, csv.String())
	var gaps []time.Duration
	for b.Loop() {
		after := int64(0)
		if events := taskEvents(b, s, taskID); len(events) > 0 {
			after = events[len(events)-1].Seq
		}
		if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
			b.Fatalf("run: %v %v", err, resp)
		}
		servicetest.WaitTaskState(b, s.Client, taskID, api.TaskStateCompleted)
		var done time.Time
		for _, e := range taskEvents(b, s, taskID) {
			switch {
			case e.Seq <= after:
			case e.Kind == "account.done":
				done = e.Time
			case e.Kind == "account.started" && !done.IsZero():
				gaps = append(gaps, e.Time.Sub(done))
			}
		}
	}
	slices.Sort(gaps)
	if len(gaps) == 0 {
		b.Fatal("no hand-off seen")
	}
	b.ReportMetric(float64(gaps[len(gaps)/2].Microseconds())/1000, "median-handoff-ms")
	b.ReportMetric(float64(gaps[len(gaps)*9/10].Microseconds())/1000, "p90-handoff-ms")
	b.ReportMetric(float64(gaps[len(gaps)-1].Microseconds())/1000, "max-handoff-ms")
}
