package imaptest

import (
	"net"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

const dialTimeout = 5 * time.Second

// Server is what tests use of a running IMAP server, whichever it is, so
// that one test can run against each.
type Server interface {
	Addr() string // host:port of plain IMAP
	Load(t testing.TB, login string, c Corpus)
	Read(t testing.TB, login string) Corpus
	Login(t testing.TB, login, password string) *imapclient.Client
	LogTail() string
}

var (
	_ Server = (*Dovecot)(nil)
	_ Server = (*Mox)(nil)
)

// imapServer is what the IMAP-only helpers (Load, Read, Login) need of a
// running server, so that one implementation serves Dovecot and mox
// alike.
type imapServer interface {
	Addr() string    // host:port of plain IMAP
	LogTail() string // for failure messages
	password(login string) (string, bool)
	// mailboxName translates a corpus folder name (see Folder) to the
	// server's mailbox, failing t for a name the server cannot hold.
	mailboxName(t testing.TB, folder string) string
	// namespacePrefix is the personal namespace's prefix (RFC 2342), which
	// Read strips from mailbox names.
	namespacePrefix() string
	clientOptions() *imapclient.Options
}

// Dial returns a client connected over plain TCP that has read the
// greeting and is not logged in. It is closed when t ends.
func (d *Dovecot) Dial(t testing.TB) *imapclient.Client {
	t.Helper()
	return dial(t, d)
}

// DialTLS is like Dial over implicit TLS, verifying the server against
// RootCAs.
func (d *Dovecot) DialTLS(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialTLS(d.TLSAddr(), d.clientOptions())
	return greeted(t, d, c, err, "implicit TLS", d.TLSAddr())
}

// DialStartTLS is like Dial, then upgrades the connection with STARTTLS
// (RFC 9051 §6.2.1), verifying the server against RootCAs.
func (d *Dovecot) DialStartTLS(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialStartTLS(d.Addr(), d.clientOptions())
	return greeted(t, d, c, err, "STARTTLS", d.Addr())
}

// Login returns a client logged in as login over plain TCP, closed when t
// ends.
func (d *Dovecot) Login(t testing.TB, login, password string) *imapclient.Client {
	t.Helper()
	return loginAs(t, d, login, password)
}

// ExpungeFirst deletes the first message of login's INBOX on d, as a
// user of that server would: a change a migration did not make.
func (d *Dovecot) ExpungeFirst(t testing.TB, login, password string) {
	t.Helper()
	c := d.Login(t, login, password)
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	var first imap.SeqSet
	first.AddNum(1)
	if err := c.Store(first, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Expunge().Close(); err != nil {
		t.Fatal(err)
	}
	c.Logout().Wait() //nolint:errcheck // done with it
}

func (d *Dovecot) clientOptions() *imapclient.Options {
	return &imapclient.Options{
		TLSConfig: d.TLSConfig(),
		Dialer:    &net.Dialer{Timeout: dialTimeout},
	}
}

// dial connects to s over plain TCP and reads the greeting.
func dial(t testing.TB, s imapServer) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(s.Addr(), s.clientOptions())
	return greeted(t, s, c, err, "plain", s.Addr())
}

// loginAs dials s and logs in with LOGIN (RFC 9051 §6.2.3).
func loginAs(t testing.TB, s imapServer, login, password string) *imapclient.Client {
	t.Helper()
	c := dial(t, s)
	if err := c.Login(login, password).Wait(); err != nil {
		t.Fatalf("imaptest: LOGIN %s on %s: %v\n%s", login, s.Addr(), err, s.LogTail())
	}
	return c
}

// greeted waits for the greeting of a client just dialled, and has it
// closed when t ends.
func greeted(t testing.TB, s imapServer, c *imapclient.Client, err error, mode, addr string) *imapclient.Client {
	t.Helper()
	if err == nil {
		t.Cleanup(func() { c.Close() })
		err = c.WaitGreeting()
	}
	if err != nil {
		t.Fatalf("imaptest: connect (%s) to %s: %v\n%s", mode, addr, err, s.LogTail())
	}
	return c
}
