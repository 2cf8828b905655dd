package comparison

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// usage is what a tool's client processes used in one pass.
type usage struct {
	wall   time.Duration // from the first start to the last exit
	cpu    time.Duration // user + system time of every client process
	maxRSS int64         // bytes: the peak RSS of the largest client process
	procs  int           // client processes run
}

// runProcesses runs cmds, at most parallel at once, and sums what they
// used. The processes' stderr is kept for the error of one that fails.
func runProcesses(ctx context.Context, cmds []*exec.Cmd, parallel int) (usage, error) {
	errs := make([]error, len(cmds))
	peaks := make([]int64, len(cmds))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	start := time.Now()
	for i, cmd := range cmds {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			peaks[i], errs[i] = runOne(cmd)
		})
	}
	wg.Wait()
	u := usage{wall: time.Since(start)}
	for i, cmd := range cmds {
		u.add(cmd.ProcessState, peaks[i])
	}
	return u, errors.Join(errs...)
}

// runOne runs cmd, and on failure says which command failed and what it
// wrote to stderr. It returns the peak RSS of the process.
func runOne(cmd *exec.Cmd) (int64, error) {
	var stderr bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	peak := watchPeakRSS(cmd.Process.Pid)
	err := cmd.Wait()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s", filepath.Base(cmd.Path), strings.Join(cmd.Args[1:], " "), err, tail(stderr.String(), 20))
	}
	return peak(), err
}

// add counts an exited process: its CPU time and peak RSS.
func (u *usage) add(ps *os.ProcessState, peakRSS int64) {
	if ps == nil {
		return
	}
	u.procs++
	u.cpu += ps.UserTime() + ps.SystemTime()
	u.maxRSS = max(u.maxRSS, peakRSS)
}

// rssPollInterval is how often watchPeakRSS samples a process.
const rssPollInterval = 10 * time.Millisecond

// watchPeakRSS samples the peak RSS (VmHWM in /proc/<pid>/status) of a
// running process until it exits, and returns a function giving the
// largest value seen, to be called once the process has been waited for.
//
// getrusage's ru_maxrss cannot be used: Go starts a child with
// clone(CLONE_VM|CLONE_VFORK), so until it execs, the child runs in the
// parent's memory, and Linux carries that memory's peak into the child's
// ru_maxrss at exec. Every tool would be charged with the RSS of this
// test process, which holds the whole corpus. VmHWM belongs to the memory
// the process has after exec. The samples miss what a process grows in its
// last few milliseconds.
func watchPeakRSS(pid int) func() int64 {
	var peak atomic.Int64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(rssPollInterval)
		defer tick.Stop()
		for {
			if hwm, ok := readVmHWM(pid); ok {
				peak.Store(max(peak.Load(), hwm))
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

// readVmHWM returns a process's peak RSS in bytes; false once it has
// exited (a zombie has no memory left to report).
func readVmHWM(pid int) (int64, bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib * 1024, err == nil
		}
	}
	return 0, false
}

// clockTick is the unit of the CPU times in /proc/<pid>/stat: USER_HZ,
// which is 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procStat is what groupCPU needs of one /proc/<pid>/stat line.
type procStat struct {
	comm string
	pgrp int
	cpu  time.Duration // utime + stime + cutime + cstime
}

// parseProcStat reads proc(5)'s "pid (comm) state ppid pgrp ... utime
// stime cutime cstime ...". comm may hold blanks and parentheses, so the
// fields are counted from its last ')'.
func parseProcStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("malformed stat %q", line)
	}
	f := strings.Fields(line[end+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("short stat %q", line)
	}
	s := procStat{comm: line[open+1 : end]}
	var err error
	if s.pgrp, err = strconv.Atoi(f[2]); err != nil {
		return procStat{}, err
	}
	for _, field := range f[11:15] { // utime, stime, cutime, cstime
		ticks, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return procStat{}, err
		}
		s.cpu += time.Duration(ticks) * clockTick
	}
	return s, nil
}

// groupProcesses returns the processes of process group pgid, zombies
// included: a zombie's time is not yet in its parent's cutime.
func groupProcesses(pgid int) []procStat {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var group []procStat
	for _, path := range paths {
		line, err := os.ReadFile(path)
		if err != nil {
			continue // it exited
		}
		if s, err := parseProcStat(string(line)); err == nil && s.pgrp == pgid {
			group = append(group, s)
		}
	}
	return group
}

// groupCPU returns the CPU time that process group pgid (a Dovecot master
// and all its children) has used so far: that of its processes and of the
// children they have reaped.
func groupCPU(pgid int) time.Duration {
	var total time.Duration
	for _, s := range groupProcesses(pgid) {
		total += s.cpu
	}
	return total
}

// systemBusy returns the CPU time the whole machine has spent busy since
// boot (proc(5), /proc/stat: user, nice, system, irq and softirq of the
// "cpu" line), to tell how much of a pass's time went to other work.
func systemBusy() time.Duration {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var busy time.Duration
	for _, i := range []int{1, 2, 3, 6, 7} {
		ticks, _ := strconv.ParseInt(f[i], 10, 64)
		busy += time.Duration(ticks) * clockTick
	}
	return busy
}

// settle waits, up to a few seconds, until the group has no imap process
// left: Dovecot runs one per connection, and one that is still exiting
// would have its time counted in the next pass.
func settle(pgid int) {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		busy := false
		for _, s := range groupProcesses(pgid) {
			busy = busy || s.comm == "imap"
		}
		if !busy {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
