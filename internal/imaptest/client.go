package imaptest

import (
	"net"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
)

const dialTimeout = 5 * time.Second

// Dial returns a client connected over plain TCP that has read the
// greeting and is not logged in. It is closed when t ends.
func (d *Dovecot) Dial(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(d.Addr(), d.clientOptions())
	return d.greeted(t, c, err, "plain")
}

// DialTLS is like Dial over implicit TLS, verifying the server against
// RootCAs.
func (d *Dovecot) DialTLS(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialTLS(d.TLSAddr(), d.clientOptions())
	return d.greeted(t, c, err, "implicit TLS")
}

// DialStartTLS is like Dial, then upgrades the connection with STARTTLS
// (RFC 9051 §6.2.1), verifying the server against RootCAs.
func (d *Dovecot) DialStartTLS(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialStartTLS(d.Addr(), d.clientOptions())
	return d.greeted(t, c, err, "STARTTLS")
}

// Login returns a client logged in as login over plain TCP, closed when t
// ends.
func (d *Dovecot) Login(t testing.TB, login, password string) *imapclient.Client {
	t.Helper()
	c := d.Dial(t)
	if err := c.Login(login, password).Wait(); err != nil {
		t.Fatalf("imaptest: LOGIN %s on %s: %v\n%s", login, d.Addr(), err, d.LogTail())
	}
	return c
}

func (d *Dovecot) clientOptions() *imapclient.Options {
	return &imapclient.Options{
		TLSConfig: d.TLSConfig(),
		Dialer:    &net.Dialer{Timeout: dialTimeout},
	}
}

func (d *Dovecot) greeted(t testing.TB, c *imapclient.Client, err error, mode string) *imapclient.Client {
	t.Helper()
	if err == nil {
		t.Cleanup(func() { c.Close() })
		err = c.WaitGreeting()
	}
	if err != nil {
		t.Fatalf("imaptest: connect (%s) to %s: %v\n%s", mode, d.Host, err, d.LogTail())
	}
	return c
}
