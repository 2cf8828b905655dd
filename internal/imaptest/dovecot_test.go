package imaptest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

var layouts = []Layout{LayoutSlash, LayoutDotInbox}

func TestStartLoginAndRefuse(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			d := StartDovecot(t, Options{Layout: layout, Users: map[string]string{"alice": "secret", "bob": "hunter2"}})
			t.Logf("started in %v on %s and %s (TLS) in %s", time.Since(start), d.Addr(), d.TLSAddr(), d.Dir)
			if d.Host != "127.0.0.1" || d.Port == 0 || d.TLSPort == 0 || d.Port == d.TLSPort {
				t.Fatalf("addresses: %+v", d)
			}
			c := d.Dial(t)
			if !c.Caps().Has(imap.CapStartTLS) {
				t.Errorf("STARTTLS not offered: %v", c.Caps())
			}
			t.Logf("greeting CAPABILITY: %s", capList(c.Caps()))
			for _, login := range []string{"alice", "bob"} {
				user := d.Login(t, login, map[string]string{"alice": "secret", "bob": "hunter2"}[login])
				caps, err := user.Capability().Wait()
				if err != nil {
					t.Fatal(err)
				}
				if login == "alice" {
					t.Logf("post-login CAPABILITY: %s", capList(caps))
				}
			}
			assertLoginRefused(t, d, "alice", "wrong")
			assertLoginRefused(t, d, "nobody-here", "secret")
		})
	}
}

func capList(caps imap.CapSet) string {
	var list []string
	for c := range caps {
		list = append(list, string(c))
	}
	slices.Sort(list)
	return strings.Join(list, " ")
}

func assertLoginRefused(t *testing.T, d *Dovecot, login, password string) {
	t.Helper()
	start := time.Now()
	err := d.Dial(t).Login(login, password).Wait()
	var imapErr *imap.Error
	if !errors.As(err, &imapErr) || imapErr.Code != imap.ResponseCodeAuthenticationFailed {
		t.Fatalf("LOGIN %s/%s: got %v, want NO [AUTHENTICATIONFAILED]", login, password, err)
	}
	// Dovecot answers a failure after up to 0.5 s, but never later: no
	// auth penalty grows.
	if elapsed := time.Since(start); elapsed > 1500*time.Millisecond {
		t.Errorf("refusal took %v: auth penalty not off?", elapsed)
	}
}

func TestTLSVerifiesAgainstRootCAs(t *testing.T) {
	t.Parallel()
	d := StartDovecot(t, Options{Users: map[string]string{"alice": "secret"}})
	for name, dial := range map[string]func(testing.TB) *imapclient.Client{
		"implicit": d.DialTLS, "starttls": d.DialStartTLS,
	} {
		c := dial(t)
		if err := c.Login("alice", "secret").Wait(); err != nil {
			t.Fatalf("%s: LOGIN: %v", name, err)
		}
		if err := c.Noop().Wait(); err != nil {
			t.Fatalf("%s: NOOP: %v", name, err)
		}
	}
	// By name, as well as by address.
	conn, err := tls.Dial("tcp", d.TLSAddr(), &tls.Config{RootCAs: d.RootCAs(), ServerName: "localhost"})
	if err != nil {
		t.Fatalf("TLS for localhost: %v", err)
	}
	if got := conn.ConnectionState().PeerCertificates[0].PublicKeyAlgorithm; got != x509.ECDSA {
		t.Errorf("certificate key %v, want ECDSA", got)
	}
	conn.Close()
	// Another pool does not verify it.
	_, err = tls.Dial("tcp", d.TLSAddr(), &tls.Config{RootCAs: x509.NewCertPool()})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("TLS with an empty pool: %v, want an unknown authority", err)
	}
}

func TestListShowsLayout(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			t.Parallel()
			d := StartDovecot(t, Options{Layout: layout, Users: map[string]string{"alice": "secret"}})
			c := d.Login(t, "alice", "secret")
			ns, err := c.Namespace().Wait()
			if err != nil {
				t.Fatal(err)
			}
			if len(ns.Personal) != 1 || ns.Personal[0].Prefix != layout.Prefix() || ns.Personal[0].Delim != layout.Delimiter() {
				t.Errorf("NAMESPACE personal %+v, want prefix %q delimiter %q", ns.Personal, layout.Prefix(), layout.Delimiter())
			}
			list, err := c.List("", "*", nil).Collect()
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*imap.ListData{}
			for _, l := range list {
				byName[l.Mailbox] = l
				if l.Delim != layout.Delimiter() {
					t.Errorf("%s: delimiter %q, want %q", l.Mailbox, l.Delim, layout.Delimiter())
				}
			}
			if byName["INBOX"] == nil {
				t.Error("no INBOX")
			}
			for _, role := range Roles {
				name := layout.RoleMailbox(role)
				if l := byName[name]; l == nil || !hasAttr(l.Attrs, role) {
					t.Errorf("no %s with %s in %v", name, role, list)
				}
			}
			if len(list) != 1+len(Roles) {
				t.Errorf("a new user has %d folders, want INBOX and the %d special-use ones", len(list), len(Roles))
			}
		})
	}
}

func TestRoleMailboxNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		layout       Layout
		folder, want string
	}{
		{LayoutSlash, "INBOX", "INBOX"},
		{LayoutSlash, `\Sent`, "Sent Items"},
		{LayoutSlash, `\Trash`, "Deleted Items"},
		{LayoutSlash, `\Junk`, "Junk E-mail"},
		{LayoutSlash, "Projects/2024/Q1", "Projects/2024/Q1"},
		{LayoutDotInbox, "inbox", "INBOX"},
		{LayoutDotInbox, `\Sent`, "INBOX.Sent"},
		{LayoutDotInbox, `\Archive`, "INBOX.Archive"},
		{LayoutDotInbox, "Projects/2024/Q1", "INBOX.Projects.2024.Q1"},
		{LayoutDotInbox, "日本語", "INBOX.日本語"},
		{LayoutDotInbox, `\Important`, ""},
	}
	for _, tt := range tests {
		if got := tt.layout.MailboxName(tt.folder); got != tt.want {
			t.Errorf("%v.MailboxName(%q) = %q, want %q", tt.layout, tt.folder, got, tt.want)
		}
	}
}

func TestAddUserWhileRunning(t *testing.T) {
	t.Parallel()
	d := StartDovecot(t, Options{Layout: LayoutDotInbox})
	// A lookup of the user before it exists must not hide it afterwards.
	assertLoginRefused(t, d, "carol", "pw")
	d.AddUser(t, "carol", "pw")
	d.Login(t, "carol", "pw")
	d.AddUser(t, "dave@example.com", "p@ss word")
	d.Login(t, "dave@example.com", "p@ss word")
}

func TestStopLeavesNothing(t *testing.T) {
	t.Parallel()
	var pid int
	var dir string
	t.Run("run", func(t *testing.T) {
		d := StartDovecot(t, Options{Users: map[string]string{"alice": "secret"}})
		pid, dir = d.Pid(), d.Dir
		c := d.Login(t, "alice", "secret") // an imap process, busy with a client
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		if members := groupMembers(pid); len(members) < 4 {
			t.Fatalf("process group %d has %v, want the master and its children", pid, members)
		}
	})
	if members := groupMembers(pid); len(members) > 0 {
		t.Errorf("processes %v outlived the test", members)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s not removed: %v", dir, err)
	}
}

func TestInstancesRunSideBySide(t *testing.T) {
	t.Parallel()
	a := StartDovecot(t, Options{Users: map[string]string{"alice": "a"}})
	b := StartDovecot(t, Options{Layout: LayoutDotInbox, Users: map[string]string{"alice": "b"}})
	a.Login(t, "alice", "a")
	b.Login(t, "alice", "b")
	assertLoginRefused(t, b, "alice", "a")
}

func TestQuota(t *testing.T) {
	t.Parallel()
	d := StartDovecot(t, Options{QuotaBytes: 50 << 10, Users: map[string]string{"alice": "secret"}})
	c := d.Login(t, "alice", "secret")
	appendBytes := func(n int) error {
		body := []byte("Subject: quota\r\n\r\n" + strings.Repeat("x", n-20) + "\r\n")
		cmd := c.Append("INBOX", int64(len(body)), nil)
		cmd.Write(body)
		cmd.Close()
		_, err := cmd.Wait()
		return err
	}
	if err := appendBytes(30 << 10); err != nil {
		t.Fatalf("APPEND within the quota: %v", err)
	}
	err := appendBytes(30 << 10)
	var imapErr *imap.Error
	if !errors.As(err, &imapErr) || imapErr.Code != imap.ResponseCodeOverQuota {
		t.Fatalf("APPEND beyond the quota: %v, want NO [OVERQUOTA]", err)
	}
	t.Logf("beyond the quota: %v", err)
}

func TestGreetingMustBeOurs(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte("* OK [CAPABILITY IMAP4rev1] Dovecot ready (imaptest-1).\r\n"))
			conn.Close()
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	if err := greets(ln.Addr().String(), "imaptest-1", deadline); err != nil {
		t.Errorf("our greeting: %v", err)
	}
	if err := greets(ln.Addr().String(), "imaptest-2", deadline); err == nil {
		t.Error("another server's greeting taken for ours")
	}
}
