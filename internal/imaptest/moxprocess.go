package imaptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// launchMox starts `mox localserve` on the configuration in dir, in a
// process group of its own, its output to logPath. Should the test
// binary die, Pdeathsig kills it.
func launchMox(bin, dir, logPath string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin, "localserve", "-dir", dir)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return watch(cmd), nil
}

// watch reaps cmd when it exits, and tells by closing exited.
func watch(cmd *exec.Cmd) *process {
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p
}

// waitServing polls until mox serves IMAP on m.Addr(). The control socket
// is the last thing mox creates at start, after it has bound its
// listener: once it is there, the port is this mox's, and so is the
// greeting (RFC 9051 §7.1.1) that follows.
func (m *Mox) waitServing(p *process) error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("mox exited at start (%v)", p.waitErr)
		case <-tick.C:
		}
		err := m.serving(deadline)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving within %s: %v", startTimeout, err)
		}
	}
}

func (m *Mox) serving(deadline time.Time) error {
	if _, err := os.Stat(filepath.Join(m.Dir, "data", "ctl")); err != nil {
		return err
	}
	return greets(m.Addr(), "mox imap", deadline)
}

// kill ends the process group at once and waits for its leader. Not
// SIGTERM: mox then waits at least a second for its connections to end,
// for data that is thrown away.
func (p *process) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // it may have exited
	<-p.exited
}
