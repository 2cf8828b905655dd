package imapconn

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
)

// loginTimeout bounds LOGIN: servers may delay a failed one on purpose.
// logoutTimeout bounds the goodbye.
const (
	loginTimeout  = 60 * time.Second
	logoutTimeout = 5 * time.Second
)

// Timeouts bound a server's silences: Greeting the dial, TLS and the
// greeting; Idle any silence mid-command after the login.
type Timeouts struct {
	Greeting, Idle time.Duration
}

// ErrSessionEnded is a session found closed between commands.
var ErrSessionEnded = errors.New("the server ended the session")

// Session is a logged-in connection to one side.
type Session struct {
	*imapclient.Client
	// conn is under the client, for abandon; a hand-written writer may
	// borrow it between the client's commands (Borrow).
	conn *sharedConn
	// abandoned is set once the connection was dropped mid-command.
	abandoned atomic.Bool
	sideOf
	stop func() bool
	// expunges are the EXPUNGE responses of the selected folder not
	// taken yet (the engine follows them while it reads a folder).
	expunges *expungeLog
}

// SideName is "source" or "destination".
func (s *Session) SideName() string { return s.name }

// TakeExpunges returns the sequence numbers of the EXPUNGE responses of
// the selected folder read since the last take, in order.
func (s *Session) TakeExpunges() []uint32 { return s.expunges.take() }

// expungeLog records the sequence numbers of EXPUNGE responses (RFC 9051
// §7.5.1), in order; the client's reader goroutine adds to it.
type expungeLog struct {
	mu   sync.Mutex
	seqs []uint32
}

func (l *expungeLog) add(seq uint32) {
	l.mu.Lock()
	l.seqs = append(l.seqs, seq)
	l.mu.Unlock()
}

// take returns the responses recorded since the last take.
func (l *expungeLog) take() []uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	seqs := l.seqs
	l.seqs = nil
	return seqs
}

// Connect dials side, waits for the greeting, secures the connection as
// configured and logs in. Cancelling ctx closes the connection, or, when
// it is lent to an appender, leaves the server answerGrace to answer the
// APPENDs on the wire (see GiveTimeToAnswer).
func Connect(ctx context.Context, side *Side, name string, timeouts Timeouts) (*Session, error) {
	raw, err := Dial(ctx, &side.Server, timeouts.Greeting)
	if err != nil {
		return nil, side.Fail(name, Classify(err), err)
	}
	idle := &idleConn{Conn: raw}
	idle.setTimeout(timeouts.Greeting)
	s := &Session{conn: newSharedConn(idle), sideOf: sideOf{side, name}, expunges: &expungeLog{}}
	// Cancelling closes the connection under the client, from the
	// greeting on (a server may accept and never greet); the engine's
	// goroutine sees its reads and writes fail and winds down (see Close).
	s.stop = context.AfterFunc(ctx, func() {
		if s.conn.isLent() {
			idle.expire(time.Now().Add(answerGrace))
			return
		}
		s.Abandon()
	})
	opts := &imapclient.Options{UnilateralDataHandler: &imapclient.UnilateralDataHandler{Expunge: s.expunges.add}}
	if err = greetByHand(s.conn, side); err == nil {
		client := imapclient.New(s.conn, opts)
		err = client.WaitGreeting()
		s.Client = client
	}
	if err != nil {
		s.stop()
		raw.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, side.Fail(name, Classify(err), fmt.Errorf("greeting: %w", err))
	}
	idle.setTimeout(loginTimeout)
	if err := side.logIn(ctx, s.Client); err != nil {
		s.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, side.Fail(name, loginKind(err), err)
	}
	idle.setTimeout(timeouts.Idle)
	return s, nil
}

// greetByHand secures a STARTTLS side's connection before go-imap's
// client sees it, and gives the client a greeting in place of the one
// read: the client then reads and writes above TLS, where a hand-written
// writer can share its connection (sharedConn). go-imap's own STARTTLS
// would put TLS above the shared connection. Other sides' greetings are
// the client's to read.
func greetByHand(conn *sharedConn, side *Side) error {
	if side.Security != SecurityStartTLS {
		return nil
	}
	a := &Appender{conn: conn.idleConn, r: bufio.NewReader(conn.idleConn), w: bufio.NewWriter(conn.idleConn),
		completed: map[string]Completion{}}
	if err := a.greet(side); err != nil {
		return err
	}
	conn.giveBack("* OK secured by STARTTLS\r\n")
	return nil
}

// logIn logs in as the side says: with an OAuth 2.0 token, with the
// account's password, or as a master on the account's behalf.
func (side *Side) logIn(ctx context.Context, client *imapclient.Client) error {
	if side.Token != nil {
		token, err := side.AccessToken(ctx)
		if err != nil {
			return err
		}
		if mech := side.mechanism(); !client.Caps().Has(imap.AuthCap(string(mech))) {
			return fmt.Errorf("%w: the server offers no AUTH=%s", errNoMechanism, mech)
		}
		sc := side.SASLToken(token)
		err = client.Authenticate(sc)
		if x, ok := sc.(*xoauth2Client); ok {
			err = withDetails(err, x.details)
		}
		return err
	}
	user, password, authzid, err := side.Credentials()
	switch {
	case err != nil:
		return err
	case authzid == "":
		return client.Login(user, password).Wait()
	case !client.Caps().Has(imap.AuthCap(sasl.Plain)):
		return errNoPlain
	}
	return client.Authenticate(sasl.NewPlainClient(authzid, user, password))
}

// Credentials are who logs in with a password, and for whom: the
// account itself; its master as "account*master" (the separator form);
// or its master with the account as SASL authorization identity
// (authzid, the other form).
func (side *Side) Credentials() (user, password, authzid string, err error) {
	switch {
	case side.Master == "" && side.Password == "":
		return "", "", "", errNoPassword
	case side.Master == "":
		return side.Login, side.Password, "", nil
	case side.MasterForm == MasterSeparator:
		return side.Login + masterSeparator + side.Master, side.Password, "", nil
	}
	return side.Master, side.Password, side.Login, nil
}

// errNoPassword spares the server a login that cannot work (and the
// account a step towards a lock-out): an account imported for a master
// login whose endpoint has none now.
var errNoPassword = errors.New("no password is stored for this login: set the account's password, or a master login on the endpoint")

// errNoPlain refuses a master login as authorization identity on a server
// without SASL PLAIN: a setting to change, not a fault to retry.
var errNoPlain = fmt.Errorf("the server offers no AUTH=PLAIN for a master login with the account as authorization identity; use the %q form", MasterSeparator)

// loginKind: any refusal of LOGIN is an authentication failure, whatever
// response code the server chose (many send none).
func loginKind(err error) Kind {
	var te *tokenError
	switch {
	case errors.As(err, &te):
		return tokenKind(err)
	case errors.Is(err, errNoPlain), errors.Is(err, errNoMechanism):
		return KindPermanent
	case errors.Is(err, errNoPassword):
		return KindAuth
	}
	if kind := Classify(err); kind != KindPermanent {
		return kind
	}
	return KindAuth
}

// Dial connects to server, with TLS from the first byte where its
// security says so; the TCP dial and the handshake each within timeout.
func Dial(ctx context.Context, server *Server, timeout time.Duration) (net.Conn, error) {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	conn, err := dialer.DialContext(ctx, "tcp", server.Address())
	if err != nil {
		return nil, err
	}
	if server.Security != SecurityTLS {
		return conn, nil
	}
	tlsConn := tls.Client(conn, server.TLSConfig())
	handshakeCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tlsConn.HandshakeContext(handshakeCtx); err != nil {
		conn.Close()
		return nil, err
	}
	return tlsConn, nil
}

func (s *Server) TLSConfig() *tls.Config {
	return &tls.Config{
		ServerName:         s.Host,
		RootCAs:            s.RootCAs,
		InsecureSkipVerify: s.SkipVerify, //nolint:gosec // the operator's explicit, UI-flagged choice
		MinVersion:         tls.VersionTLS12,
	}
}

// Close logs out politely, waiting a few seconds at most for the server.
// A connection that was cancelled or abandoned is just closed: a command
// left half-written holds the client's writer, and a FETCH left half-read
// its reader, so waiting for either (Client.Close does) could hang. Its
// reader goroutine ends with the connection, or stays parked on a literal
// nobody will read: a small leak per failed connection, not a hang.
func (s *Session) Close() {
	if !s.stop() || s.abandoned.Load() {
		s.conn.Close()
		return
	}
	loggedOut := make(chan struct{})
	go func() {
		s.Logout().Wait() //nolint:errcheck // closing anyway
		close(loggedOut)
	}()
	select {
	case <-loggedOut:
	case <-time.After(logoutTimeout):
	}
	s.conn.Close()
	s.Client.Close()
}

// Failed passes a connection failure on, with the words of the BYE the
// server sent before it, if it sent one.
func (s *Session) Failed(err error) error {
	if text := s.conn.bye.Load(); text != nil {
		err = &byeError{text: *text, err: err}
	}
	return s.sideOf.Failed(err)
}

// Abandon drops the connection in the middle of a command that cannot be
// finished: an APPEND whose literal was cut, a FETCH whose source broke.
func (s *Session) Abandon() {
	s.abandoned.Store(true)
	s.conn.Close()
}

// idleConn fails a read or write that waits longer than its timeout: a
// server that goes silent must not hang a migration. It owns the
// connection's deadlines: go-imap's own (30 s for any response, greeting
// included) are ignored, since a busy server may take longer to commit an
// APPEND, and a silent one must fail sooner than that before the greeting.
type idleConn struct {
	net.Conn
	timeout  atomic.Int64 // time.Duration
	timedOut atomic.Value // the error of a read that timed out
	// expiry, when set (Unix nanoseconds), is a deadline no read or write
	// goes past, whatever the timeout.
	expiry atomic.Int64
	// bye is the text of an untagged BYE that was the last thing read
	// (byeError); nil while other data came after it.
	bye atomic.Pointer[string]
}

// byeLine is how an untagged BYE begins, and maxByeLine how far from the
// end of what was read one is looked for.
var byeLine = []byte("* BYE ")

const maxByeLine = 512

// noteBye keeps the words of an untagged BYE when it ends what was just
// read, as a server's last words before it closes do, and forgets them
// when anything else is read: a message's body that holds such a line
// mid-stream is not taken for one. Only the read's tail is looked at.
func (c *idleConn) noteBye(read []byte) {
	if len(read) == 0 {
		return
	}
	start := max(0, len(read)-maxByeLine)
	i := bytes.LastIndex(read[start:], byeLine)
	if i < 0 || (start+i > 0 && read[start+i-1] != '\n') {
		c.bye.Store(nil)
		return
	}
	text, rest, _ := bytes.Cut(read[start+i+len(byeLine):], []byte("\r\n"))
	if len(rest) > 0 {
		c.bye.Store(nil)
		return
	}
	words := string(text)
	c.bye.Store(&words)
}

// expire makes every read and write fail from t on; safe from any
// goroutine.
func (c *idleConn) expire(t time.Time) {
	c.expiry.Store(t.UnixNano())
	c.Conn.SetDeadline(t) //nolint:errcheck // fails only on a closed conn
}

// deadline is now plus the timeout, or the expiry if sooner.
func (c *idleConn) deadline() time.Time {
	d := time.Now().Add(time.Duration(c.timeout.Load()))
	if e := c.expiry.Load(); e != 0 && e < d.UnixNano() {
		return time.Unix(0, e)
	}
	return d
}

// setTimeout changes the timeout, for the read or write in flight too: a
// read that started under the long timeout of LOGIN must not keep it.
func (c *idleConn) setTimeout(d time.Duration) {
	c.timeout.Store(int64(d))
	deadline := c.deadline()
	c.Conn.SetReadDeadline(deadline)  //nolint:errcheck // fails only on a closed conn
	c.Conn.SetWriteDeadline(deadline) //nolint:errcheck // likewise
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err, _ := c.timedOut.Load().(error); err != nil {
		return 0, err
	}
	c.Conn.SetReadDeadline(c.deadline()) //nolint:errcheck // fails only on a closed conn
	n, err := c.Conn.Read(p)
	c.noteBye(p[:n])
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		// Sticky: go-imap's decoder reads again after an error (a byte at
		// a time, up to four times per response), which would wait the
		// timeout out once per read.
		c.timedOut.Store(err)
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(c.deadline()) //nolint:errcheck // see Read
	return c.Conn.Write(p)
}

// SetDeadline and its kin ignore the client library's deadlines (see idleConn).
func (c *idleConn) SetDeadline(time.Time) error      { return nil }
func (c *idleConn) SetReadDeadline(time.Time) error  { return nil }
func (c *idleConn) SetWriteDeadline(time.Time) error { return nil }
