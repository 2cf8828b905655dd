package comparison

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"
)

// Hosting scale: a cut-over re-run over many accounts with nothing new.
const (
	manyAccounts         = 2000
	manyAccountsParallel = 16
	manyAccountsMessages = 3 // in each INBOX
)

// BenchmarkCompareManyAccounts copies manyAccounts small accounts (scaled
// by MAILMIGRATE_BENCH_SCALE) with the service (API, job queue, admission,
// engine), mbsync and doveadm, each into empty accounts of its own
// destination, manyAccountsParallel at a time (mbsync and doveadm as that
// many processes), then re-runs each with nothing new. It prints the
// table of BenchmarkCompareTools: each pass's time beside the CPU of the
// client (the service with its PostgreSQL) and of each Dovecot. On a
// machine that runs all three, the servers' share bounds the time: it
// ends with the source's CPU for the re-run's sessions alone
// (sessionsAlone), and the least re-run time that leaves.
func BenchmarkCompareManyAccounts(b *testing.B) {
	var tools []tool
	for _, t := range requireTools(b) {
		if t.name() != (engineTool{}).name() { // the engine alone: BenchmarkCompareTools
			tools = append(tools, t)
		}
	}
	tools = append([]tool{serviceTool{bin: buildService(b, b.TempDir())}}, tools...)
	n := max(int(math.Round(manyAccounts*benchScale(b))), 2)
	storage := storeInMemory(b, 64<<20)
	src := loadManyAccounts(b, n)
	var rows []row
	for _, t := range tools {
		b.Run(t.name(), func(b *testing.B) {
			for b.Loop() {
				r := measure(b, src, t, manyAccountsParallel)
				b.ReportMetric(r.second.wall.Seconds(), "rerun-s")
				b.ReportMetric(float64(r.second.wall.Microseconds())/1000/float64(n), "rerun-ms/account")
				b.ReportMetric(r.second.cpu.Seconds(), "rerun-client-CPU-s")
				b.ReportMetric(r.second.srcCPU.Seconds(), "rerun-source-CPU-s")
				b.ReportMetric(r.second.dstCPU.Seconds(), "rerun-dest-CPU-s")
				rows = append(rows, r)
			}
		})
	}
	bound := sessionsAlone(b, src, manyAccountsParallel)
	printTable(os.Stdout, src, storage, toolNames(tools), rows)
	printBound(os.Stdout, src, manyAccountsParallel, bound)
}

// loadManyAccounts starts the source with n accounts of
// manyAccountsMessages small messages in their INBOX, and reads them back.
func loadManyAccounts(b *testing.B, n int) *source {
	b.Helper()
	start := time.Now()
	src := startSource(b, n)
	for i, a := range src.accounts {
		src.dovecot.WriteInbox(b, a.srcLogin, manyAccountsMessages, func(j int) []byte {
			return fmt.Appendf(nil, "From: <%s@example.com>\r\nTo: <user@example.com>\r\nSubject: message %d of account %d\r\n"+
				"Message-ID: <%d.%d@example.com>\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\n\r\nHello.\r\n", a.srcLogin, j, i, i, j)
		})
		src.readBack(b, a)
	}
	b.Logf("source loaded in %s: %d accounts, %d messages", time.Since(start).Round(time.Second), n, src.messages)
	return src
}
