package comparison

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// TestMain runs the tests, or, in the engine's child process, one pass of
// the engine (see engineChildEnv).
func TestMain(m *testing.M) {
	if os.Getenv(engineChildEnv) != "" {
		os.Exit(engineChild(context.Background(), os.Stdin, os.Stdout, os.Stderr))
	}
	dbtest.Main(m) // the service's databases

}

// tool is one way of migrating the accounts of a run.
type tool interface {
	name() string
	// migrate copies every account of r, at most r.parallel at once, and
	// returns what its client processes used. Called twice per run, it
	// must find the state of the first pass in r.dir.
	migrate(ctx context.Context, r *run) (usage, error)
}

// BenchmarkCompareTools migrates two corpora (corpora; scaled by
// MAILMIGRATE_BENCH_SCALE) from a Dovecot with "/" and no prefix to empty
// accounts on a Dovecot with "." and "INBOX.": with the whole service
// (API, job queue, engine: what a user runs), the copy engine alone,
// mbsync and doveadm backup, at the corpus's parallelisms, then runs each
// again (nothing new to copy). It prints one table per corpus: speed, peak
// RSS and CPU of the client, CPU of each Dovecot, second-run time, speed
// ratios and how exactly each destination matches its source. mbsync or
// doveadm missing fails it.
func BenchmarkCompareTools(b *testing.B) {
	tools := requireTools(b)
	tools = append([]tool{serviceTool{bin: buildService(b, b.TempDir())}}, tools...)
	scale := benchScale(b)
	storage := storeInMemory(b, 3*int64(accountCount*accountBytes*scale))
	for _, c := range corpora {
		b.Run(c.name, func(b *testing.B) {
			start := time.Now()
			src := loadSource(b, c, scale)
			b.Logf("source loaded in %s: %d accounts, %d messages, %.1f MB", time.Since(start).Round(time.Second),
				len(src.accounts), src.messages, float64(src.bytes)/1e6)
			var rows []row
			for _, parallel := range c.parallelisms {
				for _, t := range tools {
					b.Run(fmt.Sprintf("%s/p%d", t.name(), parallel), func(b *testing.B) {
						for b.Loop() {
							r := measure(b, src, t, parallel)
							r.report(b, src)
							rows = append(rows, r)
						}
					})
				}
			}
			printTable(os.Stdout, src, storage, toolNames(tools), rows)
		})
	}
}

// memoryDir is where mail stores go when it has room.
const memoryDir = "/dev/shm"

// storeInMemory points TMPDIR, where imaptest puts its Dovecots, at a
// directory in memory when memoryDir has room for need bytes and TMPDIR
// is not set, and says where the mail stores are. A run writes the corpus
// twice (source and destination); on disk, the kernel's writeback of that
// data lands on whichever run comes next, and varies from run to run on a
// virtual machine, while the comparison is about the tools and the
// servers. Set TMPDIR to measure with a disk.
func storeInMemory(b *testing.B, need int64) string {
	b.Helper()
	if dir := os.Getenv("TMPDIR"); dir != "" {
		return "in " + dir + " (TMPDIR)"
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(memoryDir, &fs); err != nil || int64(fs.Bavail)*fs.Bsize < need {
		return "on disk (" + os.TempDir() + ")"
	}
	dir, err := os.MkdirTemp(memoryDir, "mailmigrate-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // Dovecot's users pass through it
		b.Fatal(err)
	}
	b.Setenv("TMPDIR", dir)
	return "in memory (" + memoryDir + ")"
}

// requireTools returns the tools compared, failing b when mbsync or
// doveadm is not installed.
func requireTools(b *testing.B) []tool {
	b.Helper()
	mbsync, err := exec.LookPath("mbsync")
	if err != nil {
		b.Fatalf("mbsync is not installed, and the comparison needs it: run `.ci/system-deps isync` (Debian: apt-get install isync): %v", err)
	}
	doveadm, err := exec.LookPath("doveadm")
	if err != nil {
		b.Fatalf("doveadm is not installed, and the comparison needs it: run `.ci/system-deps dovecot` (Debian: apt-get install dovecot-core): %v", err)
	}
	return []tool{engineTool{}, mbsyncTool{bin: mbsync}, doveadmTool{bin: doveadm}}
}

func toolNames(tools []tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.name())
	}
	return names
}

// run is one tool's migration of every account into a destination
// Dovecot of its own, empty at the start.
type run struct {
	b        *testing.B
	src      *source
	dst      *imaptest.Dovecot
	parallel int
	dir      string // the tool's files: configurations, sync state
	pass     int    // 1, then 2 for the re-run
	// service is the service process that serviceTool started for the
	// first pass; the re-run goes through it too.
	service *serviceRun
}

// passResult is what one pass cost the client and the two servers.
type passResult struct {
	usage
	srcCPU, dstCPU time.Duration
	// otherCPU is the machine's busy time during the pass that was
	// neither the client's nor the Dovecots': other processes (such as
	// other tests) and kernel work. Much of it means the figures are
	// disturbed.
	otherCPU time.Duration
	err      error
}

// measure runs tool t twice over a fresh destination and verifies the
// result; only the first pass is timed by b.
func measure(b *testing.B, src *source, t tool, parallel int) row {
	b.StopTimer()
	r := &run{b: b, src: src, dst: startDestination(b, src), parallel: parallel, dir: b.TempDir()}
	b.StartTimer()
	first := r.runPass(b, t)
	b.StopTimer()
	verdict, counts := r.verify(b)
	second := r.runPass(b, t)
	if changed := r.recount(b, counts); changed != "" {
		verdict += "; " + changed
	}
	for _, p := range []passResult{first, second} {
		if p.err != nil {
			verdict = "FAILED, see the log; " + verdict
			break
		}
	}
	b.StartTimer() // b.Loop wants it running
	return row{tool: t.name(), parallel: parallel, first: first, second: second, verdict: verdict}
}

// startDestination starts a Dovecot with "." and "INBOX." (LayoutDotInbox)
// and an empty account for every source account.
func startDestination(b *testing.B, src *source) *imaptest.Dovecot {
	b.Helper()
	users := map[string]string{}
	for _, a := range src.accounts {
		users[a.dstLogin] = a.dstPassword
	}
	return imaptest.StartDovecot(b, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
}

// runPass runs one pass of t and measures it. A tool that fails fails b,
// and the comparison goes on.
func (r *run) runPass(b *testing.B, t tool) passResult {
	b.Helper()
	r.pass++
	settle(r.src.dovecot.Pid())
	settle(r.dst.Pid())
	srcBefore, dstBefore, busyBefore := groupCPU(r.src.dovecot.Pid()), groupCPU(r.dst.Pid()), systemBusy()
	u, err := t.migrate(b.Context(), r)
	if err != nil {
		b.Errorf("%s, pass %d, %d at once: %v\ndestination log:\n%s", t.name(), r.pass, r.parallel, err, r.dst.LogTail())
	}
	settle(r.src.dovecot.Pid())
	settle(r.dst.Pid())
	busy := systemBusy() - busyBefore
	p := passResult{
		usage:  u,
		srcCPU: groupCPU(r.src.dovecot.Pid()) - srcBefore,
		dstCPU: groupCPU(r.dst.Pid()) - dstBefore,
		err:    err,
	}
	p.otherCPU = max(busy-p.cpu-p.srcCPU-p.dstCPU, 0)
	return p
}
