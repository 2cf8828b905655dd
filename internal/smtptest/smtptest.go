// Package smtptest is an SMTP server for tests (RFC 5321, the part a
// submission client uses): it takes mail on loopback and keeps it, and can
// refuse the first messages with a temporary failure.
package smtptest

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Message is one mail the server took.
type Message struct {
	From string
	To   []string
	Data string // the message as sent, CRLF line ends, dot-stuffing undone
}

// Server is a running SMTP server; it stops when the test ends.
type Server struct {
	Host string
	Port int
	// refuse is how many messages are answered 451 before the first is
	// taken.
	refuse int

	mu       sync.Mutex
	messages []Message
	refused  int
}

// Start runs a server on loopback that refuses the first refuse messages.
func Start(t testing.TB, refuse int) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{refuse: refuse}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { s.serve(conn) })
		}
	})
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Messages are the mails taken so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Refused is how many messages were refused.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func (s *Server) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	reply := func(line string) { conn.Write([]byte(line + "\r\n")) } //nolint:errcheck // a client gone ends the read below
	reply("220 smtptest ready")
	var msg Message
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			reply("250-smtptest\r\n250-8BITMIME\r\n250 SIZE 10485760")
		case "MAIL":
			msg = Message{From: address(arg)}
			reply("250 ok")
		case "RCPT":
			msg.To = append(msg.To, address(arg))
			reply("250 ok")
		case "DATA":
			reply("354 go on")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, "."))
			}
			msg.Data = data.String()
			s.mu.Lock()
			if s.refused < s.refuse {
				s.refused++
				s.mu.Unlock()
				reply("451 4.3.0 try again later")
				continue
			}
			s.messages = append(s.messages, msg)
			s.mu.Unlock()
			reply("250 taken")
		case "RSET", "NOOP":
			reply("250 ok")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not here")
		}
	}
}

// address is the path of "FROM:<a@b>" or "TO:<a@b>".
func address(arg string) string {
	_, path, _ := strings.Cut(arg, ":")
	path, _, _ = strings.Cut(strings.TrimSpace(path), " ")
	return strings.Trim(path, "<>")
}
