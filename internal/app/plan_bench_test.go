package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// BenchmarkTaskPlan5k: what a task's plan costs to read for a task of
// 5 000 planned accounts of 40 folders each, through the HTTP API and
// PostgreSQL: the task page's Plan section reads it at each refresh, and
// every second while plans are pending. It reports the bytes a read
// carries too. Before plans had their figures in columns (migration
// 0031), every read carried every account's whole plan: 1.2 s and 61 MB.
func BenchmarkTaskPlan5k(b *testing.B) {
	const accounts = 5_000
	s := servicetest.Start(b, servicetest.Options{})
	ctx := context.Background()
	taskID := createTask(b, s, createEndpoint(b, s, "127.0.0.1", 1), createEndpoint(b, s, "127.0.0.1", 2), "")
	var csv strings.Builder
	for i := range accounts {
		fmt.Fprintf(&csv, "user%05d@example.org,pw\n", i)
	}
	importAccounts(b, s, taskID, csv.String())
	plan := benchPlan(40)
	raw, err := json.Marshal(plan)
	if err != nil {
		b.Fatal(err)
	}
	// Every 10th account is blocked, every 50th could not be read.
	if _, err := s.Pool.Exec(ctx, `
		INSERT INTO account_plans (account_id, task_id, state, blocking, plan, error, planned_at,
		                           folders, source_messages, source_bytes, to_copy_bytes, quota_free, problems)
		SELECT id, task_id, CASE WHEN id % 50 = 0 THEN 'failed' ELSE 'done' END, id % 10 = 0,
		       CASE WHEN id % 50 = 0 THEN NULL ELSE $2::jsonb END,
		       CASE WHEN id % 50 = 0 THEN 'login refused' ELSE '' END, now(),
		       $3, $4, $5, $5, $6, CASE WHEN id % 7 = 0 THEN $7 ELSE 0 END
		FROM accounts WHERE task_id = $1`, taskID, raw, len(plan.Folders), plan.SourceMessages, plan.SourceBytes, plan.QuotaFree, len(plan.Problems)); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Pool.Exec(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	for name, query := range map[string]string{
		"console":  "?filter=problems&limit=50", // the task page: the accounts with problems, a page of 50
		"sums":     "?limit=1",                  // the CLI waiting for pending plans
		"all-5000": "",                          // every account in brief (the CLI reads them in pages of 1000)
	} {
		b.Run(name, func(b *testing.B) {
			var bytes int64
			for b.Loop() {
				resp, err := http.Get(fmt.Sprintf("%s/tasks/%d/plan%s", s.API, taskID, query))
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("GET plan%s: %d %v", query, resp.StatusCode, err)
				}
				bytes = n
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/refresh")
			b.ReportMetric(float64(bytes)/1024, "KiB/refresh")
		})
	}
}

// benchPlan is an account's plan of that many folders, a few with a
// problem, as a mailbox of some years has.
func benchPlan(folders int) migration.AccountPlan {
	p := migration.AccountPlan{SourceCapabilities: []string{"UIDPLUS", "CONDSTORE", "QRESYNC", "SPECIAL-USE", "LITERAL+"},
		DestinationCapabilities: []string{"UIDPLUS", "MULTIAPPEND", "CONDSTORE", "QRESYNC", "SPECIAL-USE", "QUOTA", "APPENDLIMIT"},
		Excluded:                []string{"Junk"}, QuotaFree: 5 << 30, SizeLimit: 50 << 20}
	for i := range folders {
		name := fmt.Sprintf("Archive/%d/Projects/Client %02d", 2010+i%12, i)
		p.Folders = append(p.Folders, migration.PlannedFolder{Source: name, Destination: name, Create: true,
			SourceMessages: 500 + i, SourceBytes: int64(500+i) * 40_000, ToCopyBytes: int64(500+i) * 40_000})
		p.SourceMessages += 500 + i
		p.SourceBytes += int64(500+i) * 40_000
	}
	p.ToCopyBytes = p.SourceBytes
	for i := range 10 {
		p.Oversize = append(p.Oversize, migration.OversizeMessage{Folder: p.Folders[i].Source, UID: uint32(100 + i), Size: 60 << 20})
	}
	p.Problems = []migration.PlanProblem{
		{Kind: "oversize", Folder: p.Folders[0].Source, Words: "10 messages are larger than the destination takes (50 MB)"},
		{Kind: "forbidden_name", Folder: p.Folders[1].Source, Words: `the destination refuses the name "Client 01"; the folder goes to "Client 01_"`}}
	return p
}
