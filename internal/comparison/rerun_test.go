package comparison

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// Hosting scale: a cut-over re-run over many accounts with nothing new.
const (
	manyAccounts         = 2000
	manyAccountsParallel = 16
	manyAccountsMessages = 3 // in each INBOX
)

// BenchmarkServiceRerunManyAccounts runs the service (API, job queue,
// admission, engine) over manyAccounts small accounts (scaled by
// MAILMIGRATE_BENCH_SCALE), manyAccountsParallel at a time: a first copy,
// then re-runs with nothing new, each timed from POST run to the run's
// last event. Beside the time it reports where the CPU went in a re-run:
// the service with its PostgreSQL, and each Dovecot; on a machine that
// runs all three, the servers' share bounds the time.
func BenchmarkServiceRerunManyAccounts(b *testing.B) {
	n := max(int(math.Round(manyAccounts*benchScale(b))), 2)
	src := startSource(b, n)
	for i, a := range src.accounts {
		src.dovecot.WriteInbox(b, a.srcLogin, manyAccountsMessages, func(j int) []byte {
			return fmt.Appendf(nil, "From: <%s@example.com>\r\nTo: <user@example.com>\r\nSubject: message %d of account %d\r\n"+
				"Message-ID: <%d.%d@example.com>\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\n\r\nHello.\r\n", a.srcLogin, j, i, i, j)
		})
	}
	src.messages = n * manyAccountsMessages
	r := &run{b: b, src: src, dst: startDestination(b, src), parallel: manyAccountsParallel, dir: b.TempDir()}
	tool := serviceTool{bin: buildService(b, b.TempDir())}
	first := r.runPass(b, tool)
	if first.err != nil {
		b.FailNow()
	}
	b.Logf("first copy of %d accounts, %d at once: %s", n, r.parallel, first.wall.Round(time.Millisecond))
	var rerun passResult
	for b.Loop() {
		p := r.runPass(b, tool)
		if p.err != nil {
			b.FailNow()
		}
		rerun.wall += p.wall
		rerun.cpu += p.cpu
		rerun.srcCPU += p.srcCPU
		rerun.dstCPU += p.dstCPU
	}
	runs := float64(b.N)
	b.ReportMetric(rerun.wall.Seconds()/runs, "rerun-s")
	b.ReportMetric(float64(rerun.wall.Microseconds())/1000/runs/float64(n), "ms/account")
	b.ReportMetric(rerun.cpu.Seconds()/runs, "service+pg-CPU-s")
	b.ReportMetric(rerun.srcCPU.Seconds()/runs, "source-CPU-s")
	b.ReportMetric(rerun.dstCPU.Seconds()/runs, "dest-CPU-s")
}
