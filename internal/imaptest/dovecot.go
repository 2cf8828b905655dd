// Package imaptest gives tests real IMAP servers: Dovecot instances (Debian's
// dovecot-imapd, 2.3) started on free loopback ports in temporary
// directories, with users, TLS from a generated certificate and one of two
// namespace layouts, plus a deterministic corpus of mail to load into them
// and a snapshot of a mail store to prove that it was left unchanged.
//
// A missing Dovecot fails the test (install it with `.ci/system-deps
// dovecot`): nothing is skipped.
package imaptest

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configures a Dovecot started by StartDovecot.
type Options struct {
	Layout Layout
	Users  map[string]string // login → password, created at start
	// QuotaBytes, when positive, limits every user's mail to that many
	// bytes: an APPEND beyond it fails with NO [OVERQUOTA] (RFC 9208).
	QuotaBytes int64
	// MaxMailSize, when positive, refuses a message larger than that many
	// bytes with NO [LIMIT] (quota_max_mail_size).
	MaxMailSize int64
	// Sdbox stores mail in Dovecot's sdbox format instead of a maildir:
	// appends to a folder of a million messages stay fast, where a maildir
	// rewrites its UID list at each one. WriteInbox and Snapshot need a
	// maildir.
	Sdbox bool
	// Capability, when set, is the capability list the server announces
	// after login (imap_capability), e.g. to play an older server without
	// LIST-EXTENDED; Dovecot still understands what it does not announce.
	Capability string
	// MasterUsers are administrators (login → password) who log in as any
	// user: as "user*master" with LOGIN, or with AUTHENTICATE PLAIN and the
	// user as authorization identity (Dovecot's master passdb).
	MasterUsers map[string]string
	// ManageSieve serves each user's Sieve scripts over ManageSieve (RFC
	// 5804, Pigeonhole's dovecot-managesieved) on SievePort.
	ManageSieve bool
	// SieveExtensions, with ManageSieve, changes which Sieve extensions
	// scripts may use (sieve_extensions), e.g. "-vacation" or "+editheader".
	SieveExtensions string
	// AuthPenalty keeps Dovecot's delays after failed logins as shipped:
	// 2 s for each failure, and more for an address that keeps failing
	// (2, 4, 8, then 15 s, good logins from it too), as a production
	// server answers a migration host with a list of dead logins.
	AuthPenalty bool
}

// Dovecot is a running Dovecot instance. It is stopped, and its directory
// removed, when the test that started it ends.
type Dovecot struct {
	Host    string // "127.0.0.1"
	Port    int    // plain IMAP, with STARTTLS offered
	TLSPort int    // implicit TLS
	// SievePort is ManageSieve's, with STARTTLS offered; 0 without
	// Options.ManageSieve.
	SievePort int
	Dir       string // everything of this instance lives here
	CertPEM   []byte // the self-signed certificate the server presents (for "127.0.0.1" and "localhost")
	Layout    Layout

	quotaBytes      int64
	maxMailSize     int64
	sdbox           bool
	capability      string
	masterUsers     bool
	manageSieve     bool
	sieveExtensions string
	authPenalty     bool
	acct            *account
	proc            *process
	usersMu         sync.Mutex        // guards passwords and the users directory
	passwords       map[string]string // login → password, for Load
}

// StartDovecot starts a Dovecot on free loopback ports in a new directory,
// creates opts.Users, and waits until it greets. It fails t when Dovecot is
// not installed or does not start, with the tail of its log.
func StartDovecot(t testing.TB, opts Options) *Dovecot {
	t.Helper()
	bin, err := findDovecot()
	if err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	acct, err := currentAccount()
	if err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	dir, err := makeDir()
	if err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	d := &Dovecot{Host: "127.0.0.1", Dir: dir, Layout: opts.Layout, acct: acct,
		passwords: map[string]string{}, quotaBytes: opts.QuotaBytes, maxMailSize: opts.MaxMailSize, sdbox: opts.Sdbox, capability: opts.Capability,
		manageSieve: opts.ManageSieve, sieveExtensions: opts.SieveExtensions, authPenalty: opts.AuthPenalty}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("imaptest: log of the Dovecot on %s:\n%s", d.Addr(), d.LogTail())
		}
		d.cleanup()
	})
	if d.CertPEM, err = writeCert(dir); err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	for _, login := range sortedKeys(opts.Users) {
		if err := d.addUser(login, opts.Users[login]); err != nil {
			t.Fatalf("imaptest: %v", err)
		}
	}
	if err := d.writeMasters(opts.MasterUsers); err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	if err := d.start(bin); err != nil {
		t.Fatalf("imaptest: %v\n%s", err, d.LogTail())
	}
	return d
}

// Addr is the host:port of plain IMAP (STARTTLS offered).
func (d *Dovecot) Addr() string { return net.JoinHostPort(d.Host, strconv.Itoa(d.Port)) }

// TLSAddr is the host:port of IMAP over implicit TLS.
func (d *Dovecot) TLSAddr() string { return net.JoinHostPort(d.Host, strconv.Itoa(d.TLSPort)) }

// RootCAs returns a pool holding the server's certificate, to verify it.
func (d *Dovecot) RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(d.CertPEM)
	return pool
}

// TLSConfig returns a client configuration that verifies the server by
// its address against RootCAs. (The certificate also names "localhost".)
func (d *Dovecot) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: d.RootCAs(), ServerName: d.Host, MinVersion: tls.VersionTLS12}
}

// Pid returns the process id of the Dovecot master. Its children (login,
// auth, imap processes) share its process group.
func (d *Dovecot) Pid() int { return d.proc.cmd.Process.Pid }

// LogTail returns the last lines of Dovecot's log, for failure messages.
func (d *Dovecot) LogTail() string {
	return logTail(d.Dir, 25)
}

func (d *Dovecot) cleanup() {
	if d.proc != nil {
		d.proc.stop()
	}
	removeDir(d.Dir)
}

// log is Dovecot's log as written so far.
func (d *Dovecot) log(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.Dir, "dovecot.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// FailedLogins counts the logins of login that the server refused for a
// wrong password, from its log (auth_verbose): what a fail2ban watching
// it would count.
func (d *Dovecot) FailedLogins(t testing.TB, login string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(d.log(t), "\n") {
		if strings.Contains(line, "("+login+",") && strings.Contains(line, "Password mismatch") {
			n++
		}
	}
	return n
}

// AuthFailures counts every failed login attempt d saw, of whatever
// login, from imap-login's "auth failed, N attempts" lines: a wrong
// password or an unknown user, what a fail2ban watching the server
// counts against the client.
func (d *Dovecot) AuthFailures(t testing.TB) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(d.log(t), "\n") {
		_, rest, ok := strings.Cut(line, "(auth failed, ")
		if !ok {
			continue
		}
		attempts, _, _ := strings.Cut(rest, " ")
		if k, err := strconv.Atoi(attempts); err == nil {
			n += k
		}
	}
	return n
}

// Logins says how many times login has logged in to d, as its log tells
// (imap-login's "Login: user=<login>"). Dovecot's log process writes a
// login's line a little after it: the count is read until it holds still
// for logSettle.
func (d *Dovecot) Logins(t testing.TB, login string) int {
	t.Helper()
	count := func() int {
		return strings.Count(d.log(t), "imap-login: Info: Login: user=<"+login+">")
	}
	n := count()
	for {
		time.Sleep(logSettle)
		again := count()
		if again == n {
			return n
		}
		n = again
	}
}

// logSettle is how long a log must hold still to be read as complete.
const logSettle = 150 * time.Millisecond
