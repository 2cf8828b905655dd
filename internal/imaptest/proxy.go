package imaptest

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
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
	return proxy(t, addr, func(client, server net.Conn) (toServer, toClient func()) {
		forward := func() { io.Copy(server, client) } //nolint:errcheck // either side closing ends the copy
		return forward, func() { copySlowly(client, server, bytesPerSecond) }
	})
}

// LineProxy forwards TCP connections to addr and hands each line a client
// sends (message bodies included: they are lines too) to onLine, without
// its CRLF, before passing it on. It returns the proxy's host and port;
// it stops when t ends.
func LineProxy(t testing.TB, addr string, onLine func(line string)) (string, int) {
	t.Helper()
	return proxy(t, addr, func(client, server net.Conn) (toServer, toClient func()) {
		forward := func() {
			r := bufio.NewReader(client)
			for {
				line, err := r.ReadString('\n')
				if line != "" {
					onLine(strings.TrimRight(line, "\r\n"))
				}
				if _, werr := io.WriteString(server, line); err != nil || werr != nil {
					return
				}
			}
		}
		return forward, func() { io.Copy(client, server) } //nolint:errcheck // either side closing ends the copy
	})
}

// proxy accepts connections until t ends, dials addr for each, and runs
// the two directions that pipe returns for the pair, each in its own
// goroutine, closing the other side's connection when it ends. It
// returns the proxy's host and port.
func proxy(t testing.TB, addr string, pipe func(client, server net.Conn) (toServer, toClient func())) (string, int) {
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
			mu.Lock()
			conns = append(conns, client, server)
			mu.Unlock()
			toServer, toClient := pipe(client, server)
			wg.Add(2)
			go func() {
				defer wg.Done()
				toServer()
				server.Close()
			}()
			go func() {
				defer wg.Done()
				toClient()
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
