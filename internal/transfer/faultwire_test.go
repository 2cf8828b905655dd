package transfer

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
)

// faultListener hands imapserver the connections of a faultServer's
// faulty port, each behind a faultConn.
type faultListener struct {
	net.Listener
	fs *faultServer
}

func (l faultListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: conn, fs: l.fs, closed: make(chan struct{}), buf: make([]byte, 32<<10)}, nil
}

// faultConn sits between a client and imapserver. It follows the client's
// commands and literals to make the server go silent where the options
// say, to refuse what the announced capabilities do not allow, and it
// rewrites imapserver's capability lists to announce exactly
// faultOptions.Caps.
type faultConn struct {
	net.Conn
	fs        *faultServer
	closed    chan struct{}
	closeOnce sync.Once

	// The client's side, read by imapserver's goroutine of the connection.
	buf       []byte // to read into
	raw       []byte // read, not yet looked at
	out       []byte // looked at, for imapserver
	line      []byte // the client's line being read
	tag       string // of the current command
	inCommand bool   // the next line continues the current command
	dropping  bool   // the rest of the current command is not for imapserver
	silent    bool
	literal   int64 // bytes of a literal still to come

	mu       sync.Mutex // guards awaiting and the writes
	awaiting *announcedLiteral
}

// announcedLiteral is a literal the client announced at the end of a
// line, until the server asks for it, takes it or refuses it.
type announcedLiteral struct {
	tag            string
	size           int64
	nonSync        bool
	asked, refused bool
}

var errNonSyncLiteral = errors.New("faultServer: non-synchronizing literal without LITERAL+")

func (c *faultConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.silent {
			return 0, c.hang()
		}
		c.settle()
		if len(c.raw) == 0 {
			if idle := c.fs.opts.IdleTimeout; idle > 0 {
				c.Conn.SetReadDeadline(time.Now().Add(idle))
			}
			n, err := c.Conn.Read(c.buf)
			if err != nil {
				return 0, err
			}
			c.raw = c.buf[:n]
		}
		if err := c.scan(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// hang waits until the connection is closed: a server that stopped.
func (c *faultConn) hang() error {
	<-c.closed
	return net.ErrClosed
}

func (c *faultConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// scan looks at what the client sent, up to a line for imapserver: the
// next command is looked at once imapserver has answered this one, and
// the bytes of a literal once it has asked for them, or refused them.
func (c *faultConn) scan() error {
	for len(c.raw) > 0 && !c.silent {
		if c.literal > 0 {
			n := min(c.literal, int64(len(c.raw)))
			if !c.dropping {
				c.out = append(c.out, c.raw[:n]...)
			}
			c.raw, c.literal = c.raw[n:], c.literal-n
			continue
		}
		i := bytes.IndexByte(c.raw, '\n')
		if i < 0 {
			c.line, c.raw = append(c.line, c.raw...), nil
			return nil
		}
		line := append(c.line, c.raw[:i+1]...)
		c.line, c.raw = nil, c.raw[i+1:]
		if err := c.endLine(line); err != nil || len(c.out) > 0 {
			return err
		}
	}
	return nil
}

// endLine handles one line of the client's.
func (c *faultConn) endLine(line []byte) error {
	size, nonSync, hasLiteral := literalAt(line)
	if !c.inCommand && !c.begin(line, hasLiteral) {
		return nil
	}
	if c.dropping {
		// Only a literal sent without asking still comes.
		c.inCommand = hasLiteral && nonSync
		c.dropping = c.inCommand
		if c.inCommand {
			c.literal = size
		}
		return nil
	}
	c.inCommand = hasLiteral
	if nonSync && !c.fs.takesNonSync(size) {
		c.reply(c.tag + " BAD Non-synchronizing literal without LITERAL+")
		return errNonSyncLiteral
	}
	c.out = append(c.out, line...)
	if hasLiteral {
		c.mu.Lock()
		c.awaiting = &announcedLiteral{tag: c.tag, size: size, nonSync: nonSync}
		c.mu.Unlock()
	}
	return nil
}

// begin counts a command of the client's, over all connections, and
// tells whether it is for imapserver: not once the server is silent, nor
// a command of an extension the server does not announce, which imapserver
// would serve although a server without it answers BAD.
func (c *faultConn) begin(line []byte, hasLiteral bool) bool {
	tag, name := commandName(line)
	c.tag = tag
	if n := c.fs.commands.Add(1); c.fs.opts.SilentAfter > 0 && n == int64(c.fs.opts.SilentAfter)+1 {
		c.silent = true
		return false
	}
	if ext := extensionOf(name); ext != "" && !hasLiteral && !c.fs.opts.Caps.Has(ext) {
		c.reply(tag + " BAD Unknown command")
		return false
	}
	return true
}

// settle learns how imapserver took the literal the client announced
// last. One it asked for, or took unasked, is read next; one it refused
// before asking is never sent; one it refused though the client sends it
// unasked (RFC 7888 §4) is dropped with the rest of its command, which
// imapserver would otherwise read as commands of their own.
func (c *faultConn) settle() {
	c.mu.Lock()
	a := c.awaiting
	c.awaiting = nil
	c.mu.Unlock()
	switch {
	case a == nil:
	case !a.refused:
		c.literal = a.size
	case a.nonSync:
		c.literal, c.dropping = a.size, true
	default:
		c.inCommand = false
	}
}

// Write sends what imapserver writes. imapserver flushes every response
// on its own, so a response that settles a literal, or a capability
// list, starts a write.
func (c *faultConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.awaiting; a != nil && !a.asked && !a.refused {
		a.asked = bytes.HasPrefix(p, []byte("+"))
		a.refused = bytes.HasPrefix(p, []byte(a.tag+" "))
	}
	if _, err := c.Conn.Write(c.fs.announce(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// reply answers a command in imapserver's place.
func (c *faultConn) reply(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Conn.Write([]byte(line + "\r\n")) //nolint:errcheck // the client's next read fails instead
}

// takesNonSync tells whether a literal of size may come without the
// server's asking: with LITERAL+, or up to 4096 bytes with LITERAL- or
// IMAP4rev2 (RFC 7888 §5; RFC 9051 §4.3).
func (fs *faultServer) takesNonSync(size int64) bool {
	caps := fs.opts.Caps
	return caps.Has(imap.CapLiteralPlus) || caps.Has(imap.CapLiteralMinus) && size <= 4096
}

// announce rewrites a capability list of imapserver's (RFC 9051 §7.2.2)
// to hold the announced capabilities only: imapserver adds LITERAL-,
// SASL-IR, UNSELECT, ENABLE, IDLE and UTF8=ACCEPT whatever its options
// say. AUTH=, LOGINDISABLED and STARTTLS, which depend on the state, stay.
func (fs *faultServer) announce(p []byte) []byte {
	s := string(p)
	if !strings.HasSuffix(s, "\r\n") || strings.Count(s, "\n") != 1 {
		return p
	}
	head, list, tail, ok := splitCapabilities(s)
	if !ok {
		return p
	}
	var kept []string
	for _, word := range strings.Fields(list) {
		if fs.announces(word) {
			kept = append(kept, word)
		}
	}
	return []byte(head + " " + strings.Join(kept, " ") + tail)
}

func (fs *faultServer) announces(word string) bool {
	_, listed := fs.opts.Caps[imap.Cap(word)]
	_, limit := fs.opts.Caps[imap.CapAppendLimit]
	switch {
	case strings.HasPrefix(word, "APPENDLIMIT="):
		return limit
	case strings.HasPrefix(word, "AUTH="):
		return true
	}
	return listed || word == string(imap.CapLoginDisabled) || word == string(imap.CapStartTLS)
}

// splitCapabilities cuts "* CAPABILITY ..." or a status response with a
// CAPABILITY response code around the list of capabilities.
func splitCapabilities(s string) (head, list, tail string, ok bool) {
	if rest, found := strings.CutPrefix(s, "* CAPABILITY "); found {
		return "* CAPABILITY", strings.TrimSuffix(rest, "\r\n"), "\r\n", true
	}
	f := strings.SplitN(s, " ", 3)
	if len(f) < 3 || f[1] != "OK" && f[1] != "PREAUTH" || !strings.HasPrefix(f[2], "[CAPABILITY ") {
		return "", "", "", false
	}
	list, tail, ok = strings.Cut(strings.TrimPrefix(f[2], "[CAPABILITY "), "]")
	return f[0] + " " + f[1] + " [CAPABILITY", list, "]" + tail, ok
}

// literalAt finds the literal a line announces at its end: {n}, or {n+}
// sent without waiting for the server (RFC 9051 §4.3, RFC 7888).
func literalAt(line []byte) (size int64, nonSync, ok bool) {
	s := strings.TrimRight(string(line), "\r\n")
	open := strings.LastIndexByte(s, '{')
	if open < 0 || !strings.HasSuffix(s, "}") {
		return 0, false, false
	}
	digits, nonSync := strings.CutSuffix(s[open+1:len(s)-1], "+")
	size, err := strconv.ParseInt(digits, 10, 64)
	return size, nonSync, err == nil && size >= 0
}

// commandName splits a command's first line into its tag and its name,
// "UID FETCH" for a UID command.
func commandName(line []byte) (tag, name string) {
	f := strings.Fields(string(line))
	if len(f) < 2 {
		return strings.Join(f, ""), ""
	}
	name = strings.ToUpper(f[1])
	if name == "UID" && len(f) > 2 {
		name += " " + strings.ToUpper(f[2])
	}
	return f[0], name
}

// extensionOf is the capability a command needs beyond IMAP4rev1, for the
// commands imapserver serves whether they are announced or not.
func extensionOf(command string) imap.Cap {
	switch command {
	case "UNSELECT":
		return imap.CapUnselect // RFC 3691
	case "ENABLE":
		return imap.CapEnable // RFC 5161
	case "IDLE":
		return imap.CapIdle // RFC 2177
	case "NAMESPACE":
		return imap.CapNamespace // RFC 2342
	case "MOVE", "UID MOVE":
		return imap.CapMove // RFC 6851
	case "UID EXPUNGE":
		return imap.CapUIDPlus // RFC 4315 §2.1
	}
	return ""
}
