package transfer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// BenchmarkMigrate copies a realistic mailbox (1 000 messages of 1–50 KB
// over a dozen folders, plus a few large ones) from one Dovecot to an
// empty account on another, with one APPEND per message and with
// MULTIAPPEND batches, and with MULTIAPPEND at each depth of the
// read-back (counts: none; full: every copy read back whole), then runs
// again to measure an incremental pass, and once more as the final pass
// does, reading every copy back against its source message.
func BenchmarkMigrate(b *testing.B) {
	src := imaptest.StartDovecot(b, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw"}})
	dst := imaptest.StartDovecot(b, imaptest.Options{Layout: imaptest.LayoutDotInbox})
	corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 42, Messages: 1000, LargeMessages: 3, LargeSize: 5 << 20})
	src.Load(b, "alice", corpus)
	var total int64
	for _, m := range corpus.Messages {
		total += int64(len(m.Body))
	}
	for _, mode := range []struct {
		name         string
		single       bool
		skip, bodies bool // the read-back: none, or of whole bodies
	}{{"append", true, false, false}, {"multiappend", false, false, false},
		{"multiappend-counts", false, true, false}, {"multiappend-full", false, false, true}} {
		b.Run(mode.name, func(b *testing.B) {
			var second, verifying time.Duration
			n := 0
			for b.Loop() {
				n++
				login := fmt.Sprintf("%s%d", mode.name, n)
				dst.AddUser(b, login, "pw")
				job := Job{
					Source:      dovecotSide(src, "alice", "pw"),
					Destination: dovecotSide(dst, login, "pw"),
					Tuning:      Tuning{SingleAppend: mode.single},
					State:       syncstate.NewMemoryState(),
					Options:     Options{SkipReadBack: mode.skip, ReadBackBodies: mode.bodies},
				}
				res, err := Migrate(context.Background(), job)
				if err != nil || int(res.MessagesCopied) != len(corpus.Messages) {
					b.Fatalf("copied %d of %d: %v", res.MessagesCopied, len(corpus.Messages), err)
				}
				b.StopTimer()
				start := time.Now()
				if res, err := Migrate(context.Background(), job); err != nil || res.MessagesCopied != 0 {
					b.Fatalf("second run copied %d: %v", res.MessagesCopied, err)
				}
				second += time.Since(start)
				final := job
				final.ReadBackAll = true
				start = time.Now()
				if res, err := Migrate(context.Background(), final); err != nil || res.MessagesCopied != 0 {
					b.Fatalf("verifying run copied %d: %v", res.MessagesCopied, err)
				}
				verifying += time.Since(start)
				b.StartTimer()
			}
			perRun := b.Elapsed().Seconds() / float64(n)
			b.ReportMetric(float64(len(corpus.Messages))/perRun, "msgs/s")
			b.ReportMetric(float64(total)/(1<<20)/perRun, "MB/s")
			b.ReportMetric(second.Seconds()/float64(n)*1000, "ms/second-run")
			b.ReportMetric(verifying.Seconds()/float64(n)*1000, "ms/final-run")
		})
	}
}
