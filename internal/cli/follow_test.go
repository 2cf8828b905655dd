package cli_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestFollowIsQuietAndMissesNothingAcrossReconnects follows a run of a
// few seconds to a file-like stdout through a network that keeps
// dropping the event stream: the progress comes as plain lines, at most
// one per account (and one for the task) per interval, and every event of
// the run is printed exactly once although the stream reconnected.
func TestFollowIsQuietAndMissesNothingAcrossReconnects(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	users := map[string]string{"ann": "pw", "ben": "pw", "cid": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users})
	for i, login := range []string{"ann", "ben", "cid"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i), Messages: 500}))
	}
	u := newUser(t, svc)
	// The source answers at 2 MB/s a connection, so the run lasts seconds
	// (about 6 MB an account) however fast the machine.
	slowHost, slowPort := imaptest.SlowProxy(t, old.Addr(), 2_000_000)
	src := u.id("endpoints", "create", "--host", slowHost, "--port", strconv.Itoa(slowPort), "--tls-mode", "plain")
	dst := u.id("endpoints", "create", "--host", neu.Host, "--port", strconv.Itoa(neu.Port), "--tls-mode", "plain")
	task := u.id("tasks", "create", "--source", src, "--destination", dst)
	u.stdin = "ann,pw\nben,pw\ncid,pw\n"
	u.ok("accounts", "import", task, "-")
	taskID, _ := strconv.ParseInt(task, 10, 64)
	before := lastSeq(t, svc, taskID)

	flaky := startStreamBreaker(t, strings.TrimPrefix(svc.URL, "http://"))
	u.env["MAILMIGRATE_URL"] = flaky.url()
	stopBreaking := flaky.breakEvery(100 * time.Millisecond)
	start := time.Now()
	ran := u.run("tasks", "run", task, "--follow", "--interval", "1s")
	elapsed := time.Since(start)
	broken := stopBreaking()
	if ran.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", ran.code, ran.stdout, ran.stderr)
	}
	if broken == 0 || !strings.Contains(ran.stderr, "reconnecting") {
		t.Fatalf("the stream was never broken (%d breaks) in %v; stderr:\n%s", broken, elapsed, ran.stderr)
	}

	// Quiet: plain lines, each account's progress at most once a second.
	if strings.Contains(ran.stdout, "\x1b[") {
		t.Errorf("ANSI escapes in output to a non-terminal")
	}
	maxLines := int(elapsed/time.Second) + 1
	for _, prefix := range []string{"progress ann ", "progress ben ", "progress cid ", "task " + task + " running: "} {
		if n := countLines(ran.stdout, prefix); n > maxLines {
			t.Errorf("%d lines %q in %v, want at most %d:\n%s", n, prefix, elapsed, maxLines, ran.stdout)
		}
	}
	if countLines(ran.stdout, "progress ") == 0 {
		t.Errorf("no progress line in %v:\n%s", elapsed, ran.stdout)
	}

	// Complete: every event of the run, once.
	for _, ev := range eventsAfter(t, svc, taskID, before) {
		if ev.Kind == "account.progress" || ev.Kind == "folder.done" {
			continue
		}
		line := ev.Time.Local().Format(time.TimeOnly) + "  " + string(ev.Kind) + "  " + ev.Message
		if n := strings.Count(ran.stdout, line+"\n"); n != 1 {
			t.Errorf("event %d %q printed %d times:\n%s", ev.Seq, line, n, ran.stdout)
		}
	}
}

func countLines(text, prefix string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

func lastSeq(t *testing.T, svc *servicetest.Service, taskID int64) int64 {
	t.Helper()
	events := eventsAfter(t, svc, taskID, 0)
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].Seq
}

func eventsAfter(t *testing.T, svc *servicetest.Service, taskID, after int64) []api.Event {
	t.Helper()
	limit := 1000
	resp, err := svc.Client.ListTaskEventsWithResponse(context.Background(), taskID, &api.ListTaskEventsParams{After: &after, Limit: &limit})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("events: %v %s", err, resp.Body)
	}
	return *resp.JSON200
}

// streamBreaker is a TCP proxy to the service that can drop the event
// streams (WebSocket connections) going through it, as a flaky network
// or a restarting load balancer would, and leaves other requests alone.
type streamBreaker struct {
	listener net.Listener
	backend  string
	mu       sync.Mutex
	streams  []net.Conn
	all      []net.Conn // closed at the end of the test
}

func startStreamBreaker(t *testing.T, backend string) *streamBreaker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &streamBreaker{listener: ln, backend: backend}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		for _, c := range b.all {
			c.Close()
		}
		b.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { b.relay(conn) })
		}
	})
	return b
}

func (b *streamBreaker) url() string { return "http://" + b.listener.Addr().String() }

// relay copies one connection both ways, noting it as a stream when its
// first request asks for one.
func (b *streamBreaker) relay(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", b.backend)
	if err != nil {
		return
	}
	defer server.Close()
	b.mu.Lock()
	b.all = append(b.all, client, server)
	b.mu.Unlock()
	first := make([]byte, 4096)
	n, err := client.Read(first)
	if err != nil {
		return
	}
	if bytes.Contains(first[:n], []byte("/events/ws")) {
		b.mu.Lock()
		b.streams = append(b.streams, client)
		b.mu.Unlock()
	}
	if _, err := server.Write(first[:n]); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(server, client); server.Close(); done <- struct{}{} }()
	go func() { io.Copy(client, server); client.Close(); done <- struct{}{} }()
	<-done
	<-done
}

// breakStreams drops every stream now open and says how many.
func (b *streamBreaker) breakStreams() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.streams {
		c.Close()
	}
	n := len(b.streams)
	b.streams = nil
	return n
}

// breakEvery drops the streams every period until the returned function
// is called; that returns how many were dropped.
func (b *streamBreaker) breakEvery(period time.Duration) func() int {
	stop, total := make(chan struct{}), make(chan int)
	go func() {
		broken := 0
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			select {
			case <-ticker.C:
				broken += b.breakStreams()
			case <-stop:
				total <- broken
				return
			}
		}
	}()
	return func() int {
		close(stop)
		return <-total
	}
}
