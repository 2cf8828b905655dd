// Package sieve moves an account's Sieve scripts (RFC 5228), its mail
// filters and vacation reply, between servers over ManageSieve (RFC 5804):
// a client of the protocol, written by hand in the style of the engine's
// wire code (no well-kept Go client exists), and a reader of scripts that
// finds the folders they file into, so that those follow the task's
// folder plan while every other byte of a script stays as it was.
package sieve

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
)

// maxLiteral bounds a string the server sends: a script, or its words.
// Servers keep scripts far smaller (Dovecot's default sieve_max_script_size
// is 1 MB).
const maxLiteral = 16 << 20

// Capabilities are what a server announces in its greeting (RFC 5804 §1.7).
type Capabilities struct {
	Implementation string
	// Extensions are the Sieve extensions its scripts may require.
	Extensions []string
	SASL       []string
	StartTLS   bool
	// MaxRedirects, 0: not announced.
	MaxRedirects int
}

// HasExtension reports whether the server takes scripts that require ext.
func (c Capabilities) HasExtension(ext string) bool {
	for _, e := range c.Extensions {
		if strings.EqualFold(e, ext) {
			return true
		}
	}
	return false
}

// Error is a server's NO or BYE: its response code (QUOTA/MAXSIZE,
// NONEXISTENT, ...) and its words, which name what it refused.
type Error struct {
	Status string // "NO" or "BYE"
	Code   string
	Text   string
}

func (e *Error) Error() string {
	words := e.Text
	if words == "" {
		words = "refused without words"
	}
	if e.Code != "" {
		return fmt.Sprintf("%s (%s)", words, e.Code)
	}
	return words
}

// Script is one script of an account, as LISTSCRIPTS names it.
type Script struct {
	Name   string
	Active bool
}

// Client is one ManageSieve connection. It is not safe for concurrent use.
type Client struct {
	conn    net.Conn
	r       *bufio.Reader
	timeout time.Duration
	caps    Capabilities
}

// NewClient reads the greeting on conn (dialed, and secured already for
// implicit TLS) within greetingTimeout and returns a client; every later
// exchange must end within timeout.
func NewClient(conn net.Conn, greetingTimeout, timeout time.Duration) (*Client, error) {
	c := &Client{conn: conn, r: bufio.NewReader(conn), timeout: greetingTimeout}
	if err := c.readCapabilities(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("reading the ManageSieve greeting: %w", err)
	}
	c.timeout = timeout
	return c, nil
}

// Capabilities are the server's, as announced last.
func (c *Client) Capabilities() Capabilities { return c.caps }

// StartTLS secures the connection (RFC 5804 §2.2); the server announces
// its capabilities again.
func (c *Client) StartTLS(config *tls.Config) error {
	if !c.caps.StartTLS {
		return errors.New("the ManageSieve server offers no STARTTLS")
	}
	if err := c.command("STARTTLS"); err != nil {
		return err
	}
	if _, err := c.response(nil); err != nil {
		return err
	}
	tlsConn := tls.Client(c.conn, config)
	c.conn.SetDeadline(time.Now().Add(c.timeout))
	if err := tlsConn.Handshake(); err != nil {
		return err
	}
	c.conn, c.r = tlsConn, bufio.NewReader(tlsConn)
	return c.readCapabilities()
}

// Authenticate logs in with mech (RFC 5804 §2.1), sending its initial
// response with the command and answering the server's challenges.
func (c *Client) Authenticate(mech sasl.Client) error {
	name, ir, err := mech.Start()
	if err != nil {
		return err
	}
	text := "AUTHENTICATE " + quote(name)
	if ir != nil {
		text += " " + quote(encode64(ir))
	}
	if err := c.command(text); err != nil {
		return err
	}
	// Each line before the OK or NO is a challenge, answered in turn.
	_, err = c.response(func(line []token) error {
		if len(line) != 1 || line[0].kind == tokenAtom {
			return fmt.Errorf("unexpected answer to AUTHENTICATE: %q", joinTokens(line))
		}
		challenge, err := decode64(line[0].text)
		if err != nil {
			return err
		}
		answer, err := mech.Next(challenge)
		if err != nil {
			c.command(`"*"`) // abandons the exchange (RFC 5804 §2.1)
			return err
		}
		return c.command(quote(encode64(answer)))
	})
	return err
}

// ListScripts lists the account's scripts (RFC 5804 §2.7).
func (c *Client) ListScripts() ([]Script, error) {
	if err := c.command("LISTSCRIPTS"); err != nil {
		return nil, err
	}
	var scripts []Script
	_, err := c.response(func(line []token) error {
		if len(line) == 0 || line[0].kind == tokenAtom {
			return fmt.Errorf("unexpected line in LISTSCRIPTS: %q", joinTokens(line))
		}
		s := Script{Name: line[0].text}
		s.Active = len(line) > 1 && strings.EqualFold(line[1].text, "ACTIVE")
		scripts = append(scripts, s)
		return nil
	})
	return scripts, err
}

// GetScript returns a script's content (RFC 5804 §2.9).
func (c *Client) GetScript(name string) (string, error) {
	if err := c.command("GETSCRIPT " + quote(name)); err != nil {
		return "", err
	}
	var content string
	var got bool
	_, err := c.response(func(line []token) error {
		if len(line) != 1 || line[0].kind == tokenAtom || got {
			return fmt.Errorf("unexpected line in GETSCRIPT: %q", joinTokens(line))
		}
		content, got = line[0].text, true
		return nil
	})
	return content, err
}

// PutScript stores a script under name, replacing one of that name (RFC
// 5804 §2.6); the server checks it first and refuses it in words.
func (c *Client) PutScript(name, content string) error {
	return c.commandWithLiteral("PUTSCRIPT "+quote(name)+" ", content)
}

// CheckScript asks whether the server would take content, without
// storing it (RFC 5804 §2.12, ManageSieve version 1.0).
func (c *Client) CheckScript(content string) error {
	return c.commandWithLiteral("CHECKSCRIPT ", content)
}

// SetActive makes name the active script (RFC 5804 §2.8).
func (c *Client) SetActive(name string) error {
	if err := c.command("SETACTIVE " + quote(name)); err != nil {
		return err
	}
	_, err := c.response(nil)
	return err
}

// Close says goodbye (RFC 5804 §2.3) and closes the connection.
func (c *Client) Close() error {
	if c.command("LOGOUT") == nil {
		c.response(nil)
	}
	return c.conn.Close()
}

// commandWithLiteral sends text followed by content as a non-synchronizing
// literal (RFC 5804 §4, "{n+}") and reads the answer.
func (c *Client) commandWithLiteral(text, content string) error {
	if err := c.command(text + "{" + strconv.Itoa(len(content)) + "+}\r\n" + content); err != nil {
		return err
	}
	_, err := c.response(nil)
	return err
}

// command sends one command line.
func (c *Client) command(text string) error {
	c.conn.SetDeadline(time.Now().Add(c.timeout))
	_, err := io.WriteString(c.conn, text+"\r\n")
	return err
}

// readCapabilities reads a capability listing up to its OK.
func (c *Client) readCapabilities() error {
	var caps Capabilities
	_, err := c.response(func(line []token) error {
		if len(line) == 0 {
			return nil
		}
		if line[0].kind != tokenString {
			// Another protocol's greeting (an IMAP server's "* OK"):
			// said at once rather than waited out.
			return fmt.Errorf("the server does not speak ManageSieve: it said %q", joinTokens(line))
		}
		value := ""
		if len(line) > 1 {
			value = line[1].text
		}
		switch strings.ToUpper(line[0].text) {
		case "IMPLEMENTATION":
			caps.Implementation = value
		case "SIEVE":
			caps.Extensions = strings.Fields(value)
		case "SASL":
			caps.SASL = strings.Fields(value)
		case "STARTTLS":
			caps.StartTLS = true
		case "MAXREDIRECTS":
			caps.MaxRedirects, _ = strconv.Atoi(value)
		}
		return nil
	})
	if err == nil {
		c.caps = caps
	}
	return err
}

// response reads the lines of a command's answer, handing each to line
// (nil: none is expected), up to the OK, NO or BYE that ends it. An OK
// returns its words; a NO or BYE an *Error.
func (c *Client) response(line func([]token) error) (string, error) {
	for {
		tokens, err := c.readLine()
		if err != nil {
			return "", err
		}
		if len(tokens) > 0 && tokens[0].kind == tokenAtom && isStatus(tokens[0].text) {
			if strings.EqualFold(tokens[0].text, "OK") {
				_, text := codeAndText(tokens[1:])
				return text, nil
			}
			return "", statusError(tokens)
		}
		if line == nil {
			return "", fmt.Errorf("unexpected line from the ManageSieve server: %q", joinTokens(tokens))
		}
		if err := line(tokens); err != nil {
			return "", err
		}
	}
}

func isStatus(word string) bool {
	switch strings.ToUpper(word) {
	case "OK", "NO", "BYE":
		return true
	}
	return false
}

// statusError is the *Error of a NO or BYE line.
func statusError(line []token) error {
	code, text := codeAndText(line[1:])
	return &Error{Status: strings.ToUpper(line[0].text), Code: code, Text: oneLine(text)}
}

// oneLine joins the lines of a server's words (Pigeonhole names each
// error of a script on a line of its own), so that a report's cell, an
// event and a table row stay one line each.
func oneLine(text string) string {
	return strings.Join(strings.FieldsFunc(text, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
}

// codeAndText splits what follows a status: an optional response code in
// parentheses, then optional words.
func codeAndText(rest []token) (code, text string) {
	if len(rest) > 0 && rest[0].kind == tokenCode {
		code, rest = rest[0].text, rest[1:]
	}
	if len(rest) > 0 {
		text = rest[0].text
	}
	return code, text
}

// readLine reads one response line, its literals included, within the
// client's timeout.
func (c *Client) readLine() ([]token, error) {
	c.conn.SetDeadline(time.Now().Add(c.timeout))
	return readTokens(c.r)
}

// quote writes s as a quoted string, of ManageSieve (RFC 5804 §4) or of a
// Sieve script (RFC 5228 §2.4.2), which escape alike.
func quote(s string) string { return `"` + quoteEscaper.Replace(s) + `"` }

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func joinTokens(line []token) string {
	words := make([]string, len(line))
	for i, t := range line {
		words[i] = t.text
	}
	return strings.Join(words, " ")
}
