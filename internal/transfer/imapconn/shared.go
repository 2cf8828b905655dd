package imapconn

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
)

// sharedConn is one logged-in connection that go-imap's client and a
// hand-written command writer (an appender) take turns on, so that an
// account costs each server one login: the MULTIAPPEND connection and
// LSUB need no session of their own. The writer borrows the connection
// with its first read or write; the client takes it back with its next
// command, once everything the writer sent is answered. Reads go to
// whoever holds the connection; the writer hands back what it reads that
// is the client's business (EXISTS, EXPUNGE, RECENT), ahead of anything
// read later.
type sharedConn struct {
	*idleConn
	mu   sync.Mutex
	turn *sync.Cond
	// lent is set while the writer holds the connection; busy tells
	// whether it has a command not answered yet.
	lent bool
	busy func() bool
	// pending is read from the server and not taken yet, by whoever
	// holds the connection; handBack is for the client, ahead of it.
	pending, handBack []byte
	reading           bool  // a read from the server is under way
	err               error // the last such read's error, for its taker
	closed            bool
	buf               []byte
}

// sharedReadSize is how much one read from the server takes at most.
const sharedReadSize = 32 << 10

// errAppendsOnTheWire is the client's command refused while the writer
// still waits for answers on the connection: they would reach the client.
var errAppendsOnTheWire = errors.New("the connection is busy with commands of its own writer")

func newSharedConn(idle *idleConn) *sharedConn {
	c := &sharedConn{idleConn: idle, buf: make([]byte, sharedReadSize)}
	c.turn = sync.NewCond(&c.mu)
	return c
}

// Read is the client's read.
func (c *sharedConn) Read(p []byte) (int, error) { return c.read(p, false) }

// Write is the client's write: it takes the connection back.
func (c *sharedConn) Write(p []byte) (int, error) {
	if err := c.reclaim(); err != nil {
		return 0, err
	}
	return c.idleConn.Write(p)
}

func (c *sharedConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.turn.Broadcast()
	c.mu.Unlock()
	return c.idleConn.Close()
}

// read waits until the reader holds the connection and something was read
// for it, reading from the server itself when nobody else is.
func (c *sharedConn) read(p []byte, writer bool) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if !writer && len(c.handBack) > 0 {
			n := copy(p, c.handBack)
			c.handBack = c.handBack[n:]
			return n, nil
		}
		holds := c.lent == writer
		switch {
		case holds && len(c.pending) > 0:
			n := copy(p, c.pending)
			c.pending = c.pending[n:]
			return n, nil
		case holds && c.err != nil:
			return 0, c.err
		case c.closed:
			return 0, net.ErrClosed
		case holds && !c.reading && len(c.pending) == 0:
			c.fill()
			continue
		}
		c.turn.Wait()
	}
}

// fill reads from the server into pending, unlocked meanwhile; called
// locked, with pending empty.
func (c *sharedConn) fill() {
	c.reading = true
	c.mu.Unlock()
	n, err := c.idleConn.Read(c.buf)
	c.mu.Lock()
	c.reading = false
	c.pending = c.buf[:n]
	if err != nil {
		c.err = err
	}
	c.turn.Broadcast()
}

// lend gives the connection to the writer.
func (c *sharedConn) lend() {
	c.mu.Lock()
	c.lent = true
	c.mu.Unlock()
}

// reclaim gives the connection back to the client, unless the writer
// waits for answers.
func (c *sharedConn) reclaim() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.lent {
		return nil
	}
	if c.busy != nil && c.busy() {
		return errAppendsOnTheWire
	}
	c.lent = false
	c.turn.Broadcast()
	return nil
}

// isLent reports whether the writer holds the connection.
func (c *sharedConn) isLent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lent
}

// giveBack queues a response line the writer read for the client.
func (c *sharedConn) giveBack(line string) {
	c.mu.Lock()
	c.handBack = append(c.handBack, line...)
	c.mu.Unlock()
}

// lentConn is the writer's side of a sharedConn.
type lentConn struct{ shared *sharedConn }

func (l lentConn) Read(p []byte) (int, error) {
	l.shared.lend()
	return l.shared.read(p, true)
}

// Write sends the writer's bytes and gives a read already under way
// (the client's, begun before the connection was lent) the idle timeout
// from now: the server's silence counts from what it was last sent.
func (l lentConn) Write(p []byte) (int, error) {
	l.shared.lend()
	n, err := l.shared.idleConn.Write(p)
	l.shared.setTimeout(time.Duration(l.shared.timeout.Load()))
	return n, err
}

// Borrow returns a hand-written command writer on s's own connection,
// with the capabilities s has. Its close hands the connection back.
func (s *Session) Borrow() *Appender {
	lent := lentConn{s.conn}
	a := &Appender{conn: s.conn.idleConn, shared: s.conn, r: bufio.NewReader(lent),
		w: bufio.NewWriterSize(lent, appendBufferSize), sideOf: s.sideOf,
		completed: map[string]Completion{}, stop: func() bool { return true }}
	s.conn.mu.Lock()
	s.conn.busy = a.busy
	s.conn.mu.Unlock()
	return a
}

// Appender returns the APPEND writer on s's connection, set up for its
// server's capabilities.
func (s *Session) Appender(singleAppend bool) *Appender {
	a := s.Borrow()
	caps := map[imap.Cap]bool{}
	for c := range s.Caps() {
		caps[imap.Cap(strings.ToUpper(string(c)))] = true
	}
	a.configure(caps, singleAppend)
	return a
}

// clientsResponse reports whether an untagged response the writer read
// belongs to the client: news of the selected folder.
func clientsResponse(response string) bool {
	words := strings.Fields(response)
	if len(words) != 2 {
		return false
	}
	switch strings.ToUpper(words[1]) {
	case "EXISTS", "EXPUNGE", "RECENT":
		return true
	}
	return false
}
