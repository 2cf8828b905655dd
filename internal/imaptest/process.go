package imaptest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	startTimeout = 15 * time.Second
	stopTimeout  = 5 * time.Second
)

var errPortTaken = errors.New("port taken")

// process is a running Dovecot master, started with -F so that it stays our
// child, in its own process group with all its children.
type process struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// start launches Dovecot on two free loopback ports and waits for its
// greeting. A port found free may be taken by another process before
// Dovecot binds it: then it tries other ports.
func (d *Dovecot) start(bin string) error {
	for attempt := 0; ; attempt++ {
		err := d.startOnce(bin)
		if !errors.Is(err, errPortTaken) || attempt == 4 {
			return err
		}
	}
}

func (d *Dovecot) startOnce(bin string) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	sievePort := 0
	if d.manageSieve {
		sievePort = ports[2]
	}
	conf, err := d.writeConfig(ports[0], ports[1], sievePort)
	if err != nil {
		return err
	}
	d.Port, d.TLSPort, d.SievePort = ports[0], ports[1], sievePort
	if err := resetDir(filepath.Join(d.Dir, "run")); err != nil {
		return err
	}
	p, err := launch(bin, conf, d.Dir)
	if err != nil {
		return err
	}
	if err := waitGreeting(p, d.Addr(), filepath.Base(d.Dir)); err != nil {
		p.stop()
		if strings.Contains(d.LogTail(), "Address already in use") {
			os.Remove(filepath.Join(d.Dir, "dovecot.log"))
			os.Remove(filepath.Join(d.Dir, "stderr.log"))
			return errPortTaken
		}
		return err
	}
	d.proc = p
	return nil
}

// resetDir empties dir of what an earlier attempt left, such as sockets
// that would refuse connections.
func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Mkdir(dir, 0o755)
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// launch starts the master in the foreground. Messages from before its log
// is open go to stderr.log. Should the test binary die, Pdeathsig shuts the
// master down, and it takes its children along.
func launch(bin, conf, dir string) (*process, error) {
	stderr, err := os.OpenFile(filepath.Join(dir, "stderr.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	cmd := exec.Command(bin, "-F", "-c", conf)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitGreeting polls addr until Dovecot answers with its "* OK" greeting
// (RFC 9051 §7.1.1) holding token, so that a server that took the port
// before ours could bind it is not mistaken for ours.
func waitGreeting(p *process, addr, token string) error {
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("dovecot exited at start (%v)", p.waitErr)
		default:
		}
		err := greets(addr, token, deadline)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dovecot did not greet on %s within %s: %v", addr, startTimeout, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func greets(addr, token string, deadline time.Time) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(deadline) //nolint:errcheck // a failed read reports it
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "* OK") || !strings.Contains(line, token) {
		return fmt.Errorf("unexpected greeting %q", strings.TrimSpace(line))
	}
	return nil
}

// stop shuts the master down and waits for it and all its children.
//
// On SIGTERM the master stops its children, but then waits up to about a
// second for the log process, and exits leaving children that have not
// exited yet to init. So the children are killed right away: the master
// reaps them, and exits within about 100 ms. It is all thrown away anyway.
func (p *process) stop() {
	pid := p.cmd.Process.Pid
	syscall.Kill(pid, syscall.SIGTERM) //nolint:errcheck // it may have exited
	deadline := time.After(stopTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for stopped := false; !stopped; {
		select {
		case <-p.exited:
			stopped = true
		case <-deadline:
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // last resort
			<-p.exited
			stopped = true
		case <-tick.C:
			killChildren(pid)
		}
	}
	// Whatever the master left behind.
	deadline = time.After(stopTimeout)
	for len(groupMembers(pid)) > 0 {
		select {
		case <-deadline:
			return
		case <-tick.C:
			killChildren(pid)
		}
	}
}

// killChildren kills the members of process group pgid but its leader.
func killChildren(pgid int) {
	for _, pid := range groupMembers(pgid) {
		if pid != pgid {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // it may have exited
		}
	}
}

// groupMembers lists the live (not zombie) processes in process group
// pgid, from /proc.
func groupMembers(pgid int) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, path := range procs {
		stat, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// proc(5): pid (comm) state ppid pgrp ...; comm may hold blanks.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 3 || fields[0] == "Z" || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		pids = append(pids, pid)
	}
	return pids
}

// logTail returns the last n lines of the instance's logs.
func logTail(dir string, n int) string {
	var out []string
	for _, name := range []string{"stderr.log", "dovecot.log"} {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(body), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		out = append(out, "--- "+name+" ---")
		out = append(out, lines...)
	}
	if len(out) == 0 {
		return "(dovecot logged nothing)"
	}
	return strings.Join(out, "\n")
}
