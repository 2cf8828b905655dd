package imaptest

import (
	"net"
	"testing"
)

// StartScripted runs a server on loopback, until t ends, that hands each
// connection to serve, in a goroutine of its own, and closes it when
// serve returns: a few lines of IMAP a test writes by hand, for a
// server's behaviour no real server shows on demand.
func StartScripted(t testing.TB, serve func(net.Conn)) (host string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				serve(conn)
			}()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	return addr.IP.String(), addr.Port
}
