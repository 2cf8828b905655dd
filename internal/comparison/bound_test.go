package comparison

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// sessionsAlone opens, parallel at once, one session per account of src
// that does no more than a re-run with nothing new must: LOGIN, one LIST
// with STATUS (RFC 5819) of every folder, LOGOUT. Its source CPU is what
// any tool's re-run costs the source, and it bounds the re-run's time on
// a machine that runs the source beside the tool.
func sessionsAlone(b *testing.B, src *source, parallel int) passResult {
	b.Helper()
	settle(src.dovecot.Pid())
	srcBefore, busyBefore, selfBefore := groupCPU(src.dovecot.Pid()), systemBusy(), processCPU()
	start := time.Now()
	var (
		wg       sync.WaitGroup
		slots    = make(chan struct{}, parallel)
		mu       sync.Mutex
		firstErr error
	)
	for _, a := range src.accounts {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := statusSession(src.dovecot.Addr(), a.srcLogin, a.srcPassword); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	p := passResult{usage: usage{wall: time.Since(start), cpu: processCPU() - selfBefore, procs: 1}, err: firstErr}
	settle(src.dovecot.Pid())
	p.srcCPU = groupCPU(src.dovecot.Pid()) - srcBefore
	p.otherCPU = max(systemBusy()-busyBefore-p.cpu-p.srcCPU, 0)
	if firstErr != nil {
		b.Errorf("sessions alone: %v", firstErr)
	}
	return p
}

// statusSession is one re-run's least session with the source.
func statusSession(addr, login, password string) error {
	c, err := imapclient.DialInsecure(addr, &imapclient.Options{Dialer: &net.Dialer{Timeout: 10 * time.Second}})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Login(login, password).Wait(); err != nil {
		return fmt.Errorf("%s: %w", login, err)
	}
	status := &imap.StatusOptions{UIDValidity: true, UIDNext: true, NumMessages: true, HighestModSeq: true}
	if _, err := c.List("", "*", &imap.ListOptions{ReturnStatus: status}).Collect(); err != nil {
		return fmt.Errorf("%s: %w", login, err)
	}
	return c.Logout().Wait()
}

// processCPU is the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// printBound writes what the sessions alone cost, and the least time any
// re-run that opens them can take here: the source's CPU spread over
// every core, as if the tool itself cost nothing.
func printBound(w io.Writer, src *source, parallel int, p passResult) {
	n := len(src.accounts)
	cores := runtime.NumCPU()
	fmt.Fprintf(w, "\nThe source's bound: %d sessions of LOGIN, LIST-STATUS and LOGOUT alone, %d at once (a Go client in the benchmark's process):\n", n, parallel)
	fmt.Fprintf(w, "  %.2f s; source CPU %.2f s (%.1f ms a session); client CPU %.2f s; other CPU %.2f s.\n",
		p.wall.Seconds(), p.srcCPU.Seconds(), float64(p.srcCPU.Microseconds())/1000/float64(n), p.cpu.Seconds(), p.otherCPU.Seconds())
	fmt.Fprintf(w, "  No re-run that logs in to every account's source can take less than the source's CPU over %d cores: %.2f s on this machine.\n",
		cores, p.srcCPU.Seconds()/float64(cores))
}
