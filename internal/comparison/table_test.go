package comparison

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// row is one tool at one parallelism.
type row struct {
	tool     string
	parallel int
	first    passResult // the copy into empty accounts
	second   passResult // the re-run, with nothing new to copy
	verdict  string
}

func (r row) msgsPerSec(src *source) float64 {
	return float64(src.messages) / r.first.wall.Seconds()
}

func (r row) mbPerSec(src *source) float64 {
	return float64(src.bytes) / 1e6 / r.first.wall.Seconds()
}

// report records the row's figures as the sub-benchmark's metrics.
func (r row) report(b *testing.B, src *source) {
	b.ReportMetric(r.msgsPerSec(src), "msgs/s")
	b.ReportMetric(r.mbPerSec(src), "MB/s")
	b.ReportMetric(float64(r.first.maxRSS)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(r.second.wall.Seconds(), "second-run-s")
}

// printTable writes the comparison: one line per row, with its speed
// against each tool's at the same parallelism, then the verdicts.
func printTable(w io.Writer, src *source, storage string, tools []string, rows []row) {
	fmt.Fprintf(w, "\nMigration of %d accounts, %d messages, %.1f MB: Dovecot (\"/\", no prefix) → empty Dovecot (\".\", \"INBOX.\"),\nplain IMAP on loopback, %d CPUs, mail stores %s.\n",
		len(src.accounts), src.messages, float64(src.bytes)/1e6, runtime.NumCPU(), storage)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"tool", "accounts at once", "first s", "msgs/s", "MB/s", "peak RSS MiB", "client CPU s", "source CPU s", "dest CPU s", "other CPU s",
		"second-run s", "client CPU s", "source CPU s", "dest CPU s"}
	for _, t := range tools {
		header = append(header, "vs "+t)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(src, tools, rows), "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "\nVerification (destination read back and compared with the source: folders, subscriptions, flags and keywords, INTERNALDATE, bodies):")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-8s %d at once: %s\n", r.tool, r.parallel, r.verdict)
	}
	fmt.Fprintln(w, "\nservice is `mailmigrate serve` driven through its API (POST run → the run's last event on the live stream), as a user runs it; engine is the copy engine alone.")
	fmt.Fprintln(w, "Peak RSS is that of the largest client process: the service and the engine run every account in one process, mbsync and doveadm one process per account.")
	fmt.Fprintln(w, "The service's client CPU includes its PostgreSQL's. The CPU columns after second-run s are the re-run's.")
	fmt.Fprintln(w, "Other CPU is what the machine spent on anything else during the copy (other processes, kernel work): when it is large, the row was disturbed.")
	fmt.Fprintln(w, "doveadm writes the destination's maildir itself, not through its IMAP server: its client CPU includes the storing, and the destination Dovecot does almost nothing.")
}

func (r row) cells(src *source, tools []string, rows []row) []string {
	cells := []string{
		r.tool, fmt.Sprint(r.parallel), seconds(r.first.wall),
		fmt.Sprintf("%.0f", r.msgsPerSec(src)), fmt.Sprintf("%.1f", r.mbPerSec(src)),
		fmt.Sprintf("%.1f", float64(r.first.maxRSS)/(1<<20)),
		seconds(r.first.cpu), seconds(r.first.srcCPU), seconds(r.first.dstCPU), seconds(r.first.otherCPU),
		seconds(r.second.wall), seconds(r.second.cpu), seconds(r.second.srcCPU), seconds(r.second.dstCPU),
	}
	for _, t := range tools {
		cells = append(cells, ratio(r, t, src, rows))
	}
	return cells
}

// ratio is r's messages per second over those of tool t at r's
// parallelism (its first row there).
func ratio(r row, t string, src *source, rows []row) string {
	for _, o := range rows {
		if o.tool == t && o.parallel == r.parallel {
			return fmt.Sprintf("%.2f×", r.msgsPerSec(src)/o.msgsPerSec(src))
		}
	}
	return "–"
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2f", d.Seconds())
}
