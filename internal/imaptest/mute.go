package imaptest

import (
	"net"
	"sync"
	"testing"
)

// Mute is a server that accepts connections and never says a word: a
// server that hangs before its greeting.
type Mute struct {
	Host string
	Port int
}

// StartMute runs a Mute until t ends, holding every connection open.
func StartMute(t testing.TB) Mute {
	t.Helper()
	return StartMuteAfter(t, "")
}

// StartMuteAfter runs a Mute that first says greeting (a line with its
// CRLF) on each connection: a server that hangs at LOGIN.
func StartMuteAfter(t testing.TB, greeting string) Mute {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte(greeting)) //nolint:errcheck // a client that left is no matter
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	addr := ln.Addr().(*net.TCPAddr)
	return Mute{Host: addr.IP.String(), Port: addr.Port}
}
