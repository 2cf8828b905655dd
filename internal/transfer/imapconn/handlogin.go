package imapconn

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-sasl"
)

// A hand-written command writer's own connection and login: Gmail's
// labels are read on one (the engine's gmail.go), and STARTTLS is done by
// hand before go-imap's client sees a session's connection (greetByHand).

// DialHandWritten connects to side and logs in on a connection that this
// package writes by hand, and returns the server's capabilities.
func DialHandWritten(ctx context.Context, side *Side, name string, timeouts Timeouts) (*Appender, map[imap.Cap]bool, error) {
	raw, err := Dial(ctx, &side.Server, timeouts.Greeting)
	if err != nil {
		return nil, nil, side.Fail(name, Classify(err), err)
	}
	conn := &idleConn{Conn: raw}
	conn.setTimeout(timeouts.Greeting)
	// A large write buffer sends bodies in few syscalls.
	a := &Appender{conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriterSize(conn, appendBufferSize),
		sideOf: sideOf{side, name}, completed: map[string]Completion{}}
	// Cancelling leaves the server answerGrace to answer the commands on
	// the wire (see the engine's folderCopy.stopping), then the connection fails.
	a.stop = context.AfterFunc(ctx, func() { conn.expire(time.Now().Add(answerGrace)) })
	caps, err := a.open(ctx, side)
	if err != nil {
		a.stop()
		raw.Close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, side.Fail(name, loginKind(err), err)
	}
	conn.setTimeout(timeouts.Idle)
	return a, caps, nil
}

// open reads the greeting, secures the connection as configured, logs in
// and returns the capabilities of the authenticated state.
func (a *Appender) open(ctx context.Context, side *Side) (map[imap.Cap]bool, error) {
	if err := a.greet(side); err != nil {
		return nil, err
	}
	a.conn.setTimeout(loginTimeout)
	if err := a.logIn(ctx, side); err != nil {
		return nil, err
	}
	caps := map[imap.Cap]bool{}
	a.onCapability = func(words []string) {
		for _, w := range words {
			caps[imap.Cap(strings.ToUpper(w))] = true
		}
	}
	defer func() { a.onCapability = nil }()
	return caps, a.Command("CAPABILITY")
}

// greet reads the greeting and, where the side says so, secures the
// connection with STARTTLS (RFC 9051 §6.2.1). Nothing is read past the
// server's answer to STARTTLS: it says nothing more before the handshake.
func (a *Appender) greet(side *Side) error {
	if _, err := a.readLine(); err != nil { // "* OK ..." greeting
		return fmt.Errorf("greeting: %w", err)
	}
	if side.Security != SecurityStartTLS {
		return nil
	}
	if err := a.Command("STARTTLS"); err != nil {
		return err
	}
	tlsConn := tls.Client(a.conn.Conn, side.TLSConfig())
	if err := tlsConn.Handshake(); err != nil {
		return err
	}
	a.conn.Conn = tlsConn
	a.r.Reset(a.conn)
	a.w = bufio.NewWriterSize(a.conn, appendBufferSize)
	return nil
}

// logIn logs in as side says (see Side.logIn): with a token, with LOGIN,
// or as a master with AUTHENTICATE PLAIN (RFC 4616: authzid NUL authcid NUL
// password).
func (a *Appender) logIn(ctx context.Context, side *Side) error {
	if side.Token != nil {
		token, err := side.AccessToken(ctx)
		if err != nil {
			return err
		}
		mech, response, err := side.SASLToken(token).Start()
		if err != nil {
			return err
		}
		return a.authenticate(mech, response)
	}
	user, password, authzid, err := side.Credentials()
	switch {
	case err != nil:
		return err
	case authzid == "":
		return a.login(user, password)
	}
	return a.authenticate(sasl.Plain, []byte(authzid+"\x00"+user+"\x00"+password))
}

// authenticate sends AUTHENTICATE with one response, after the server's
// continuation. A refusal may come as a challenge first (XOAUTH2's JSON
// details), which an empty response answers; its text joins the error.
func (a *Appender) authenticate(mech string, response []byte) error {
	tag := a.nextTag()
	a.w.WriteString(tag + " AUTHENTICATE " + mech + "\r\n")
	if err := a.continuation(tag, "AUTHENTICATE before its response"); err != nil {
		return err
	}
	a.w.WriteString(base64.StdEncoding.EncodeToString(response))
	a.w.WriteString("\r\n")
	if err := a.w.Flush(); err != nil {
		return err
	}
	details := ""
	for {
		line, err := a.readLine()
		if err != nil {
			return err
		}
		if challenge, ok := strings.CutPrefix(line, "+"); ok {
			decoded, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(challenge))
			details = string(decoded)
			a.w.WriteString("\r\n")
			if err := a.w.Flush(); err != nil {
				return err
			}
			continue
		}
		if done, ok := a.dispatch(line); ok && done == tag {
			c := a.completed[tag]
			delete(a.completed, tag)
			return withDetails(c.Err, details)
		}
	}
}

// login sends LOGIN. A login or password with 8-bit characters goes as a
// literal: IMAP4rev1 allows only 7-bit text in a quoted string (RFC 3501
// §4.3, §9), and a server that holds to it would refuse the login.
func (a *Appender) login(login, password string) error {
	if isASCII(login) && isASCII(password) {
		return a.Command("LOGIN " + Quote(login) + " " + Quote(password))
	}
	tag := a.nextTag()
	a.w.WriteString(tag + " LOGIN ")
	for i, arg := range []string{login, password} {
		if i > 0 {
			a.w.WriteByte(' ')
		}
		if err := a.literal(tag, int64(len(arg))); err != nil {
			return err
		}
		a.w.WriteString(arg)
	}
	if _, err := a.w.WriteString("\r\n"); err != nil {
		return err
	}
	if err := a.w.Flush(); err != nil {
		return err
	}
	return a.Wait(tag).Err
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
