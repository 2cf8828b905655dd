package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// BenchmarkAccountPage30k: what the task page asks for at each refresh of
// a task of 30 000 accounts, through the HTTP API and PostgreSQL: the task
// and one page of 50 accounts, in the orders and filters the page offers.
// The goal is under 100 ms a page.
func BenchmarkAccountPage30k(b *testing.B) {
	const accounts = 30_000
	s := servicetest.Start(b, servicetest.Options{})
	taskID := createTask(b, s, createEndpoint(b, s, "127.0.0.1", 1), createEndpoint(b, s, "127.0.0.1", 2), "")
	var csv strings.Builder
	for i := range accounts {
		fmt.Fprintf(&csv, "user%05d@example.org,pw\n", i)
	}
	importAccounts(b, s, taskID, csv.String())
	// A run under way: most done, some failed, 16 running, the rest queued.
	if _, err := s.Pool.Exec(context.Background(), `
		UPDATE accounts SET
		  state = CASE WHEN id % 100 = 0 THEN 'failed' WHEN id % 1000 < 16 THEN 'running'
		               WHEN id % 3 = 0 THEN 'queued' ELSE 'completed' END,
		  messages_total = 1000 + id % 500, messages_copied = id % 1500
		WHERE task_id = $1`, taskID); err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, path string) {
		resp, err := http.Get(s.API + path)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
	}
	b.Run("task-alone", func(b *testing.B) {
		for b.Loop() {
			get(b, fmt.Sprintf("/tasks/%d", taskID))
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/refresh")
	})
	for name, query := range map[string]string{
		"state-order":    "?sort=state&limit=50",
		"id-order":       "?limit=50",
		"failed":         "?state=failed&limit=50",
		"search":         "?q=user123&sort=login&limit=50",
		"progress-order": "?sort=-progress&limit=50",
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				get(b, fmt.Sprintf("/tasks/%d", taskID))
				get(b, fmt.Sprintf("/tasks/%d/accounts%s", taskID, query))
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/refresh")
		})
	}
}
