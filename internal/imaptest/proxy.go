package imaptest

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// SlowProxy forwards TCP connections to addr and sends what the server
// answers at about bytesPerSecond per connection: a small mailbox then
// takes seconds to copy, long enough to watch its progress or cancel it.
// It returns the proxy's host and port; it stops when t ends.
func SlowProxy(t testing.TB, addr string, bytesPerSecond int) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	keep := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", addr)
			if err != nil {
				client.Close()
				continue
			}
			keep(client)
			keep(server)
			wg.Add(2)
			go func() {
				defer wg.Done()
				io.Copy(server, client) //nolint:errcheck // either side closing ends the copy
				server.Close()
			}()
			go func() {
				defer wg.Done()
				copySlowly(client, server, bytesPerSecond)
				client.Close()
			}()
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return host, p
}

// copySlowly copies src to dst in small chunks, each after the wait its
// size is worth at the rate.
func copySlowly(dst io.Writer, src io.Reader, bytesPerSecond int) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(time.Duration(n) * time.Second / time.Duration(bytesPerSecond))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed connection
		}
	}
}
