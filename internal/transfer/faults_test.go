package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// cuttingProxy forwards TCP to target and, for its first `cuts`
// connections, drops the connection once the client has sent `after`
// bytes: a network failure in the middle of a command.
type cuttingProxy struct {
	ln    net.Listener
	after int64
	// downstream counts the bytes the server sends instead.
	downstream atomic.Bool
	cuts       atomic.Int32
	conns      atomic.Int32
	// received counts the bytes servers sent to clients, as they pass:
	// all of a run's answers are counted when it returns.
	received atomic.Int64
}

func startCuttingProxy(t *testing.T, target string, after int64, cuts int32) *cuttingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{ln: ln, after: after}
	p.cuts.Store(cuts)
	t.Cleanup(func() { ln.Close() })
	go p.serve(target)
	return p
}

func (p *cuttingProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *cuttingProxy) serve(target string) {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		server, err := net.Dial("tcp", target)
		if err != nil {
			client.Close()
			continue
		}
		limit := int64(-1)
		if p.cuts.Add(-1) >= 0 {
			limit = p.after
		}
		go func() {
			defer client.Close()
			defer server.Close()
			var wg sync.WaitGroup
			var toClient io.Writer = countingWriter{client, &p.received}
			from, to := io.ReadWriter(client), io.ReadWriter(server)
			fromW, toW := toClient, io.Writer(server)
			if p.downstream.Load() {
				from, to = server, client
				fromW, toW = server, toClient
			}
			wg.Go(func() { io.Copy(fromW, to) })
			if limit >= 0 {
				io.CopyN(toW, from, limit) // then both ends are closed
			} else {
				io.Copy(toW, from)
			}
			client.Close()
			server.Close()
			wg.Wait()
		}()
	}
}

func seedInbox(t *testing.T, m *memServer, login, password string, n, size int) {
	t.Helper()
	c := m.client(t, login, password)
	msgs := make([]testMessage, n)
	for i := range msgs {
		msgs[i] = testMessage{Date: time.Date(2020, 1, 1+i%28, 0, 0, 0, 0, time.UTC), Body: mail(fmt.Sprintf("m%d@x", i), fmt.Sprint("message ", i), size)}
	}
	appendMessages(t, c, "INBOX", msgs...)
}

func TestCancelStopsPromptlyAndARerunCompletes(t *testing.T) {
	t.Parallel()
	src := startMemServer(t, map[string]string{"a": "pw"})
	dst := startMemServer(t, map[string]string{"a": "pw"})
	seedInbox(t, src, "a", "pw", 200, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	job := Job{Source: src.side("a", "pw"), Destination: dst.side("a", "pw"), State: syncstate.NewMemoryState()}
	job.OnProgress = func(p Progress) {
		if p.MessagesCopied >= 20 {
			cancel()
		}
	}
	start := time.Now()
	res, err := Migrate(ctx, job)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled run: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("cancel took %s", elapsed)
	}
	if res.MessagesCopied >= 200 {
		t.Fatalf("cancel came too late to test anything (%d copied)", res.MessagesCopied)
	}
	job.OnProgress = nil
	if _, err := Migrate(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if n := len(readFolder(t, dst.client(t, "a", "pw"), "INBOX")); n != 200 {
		t.Errorf("after cancel and re-run the destination has %d messages, want 200", n)
	}
}

// neverGreets is a server that accepts connections and says nothing.
func neverGreets(t *testing.T) imapconn.Side {
	t.Helper()
	mute := imaptest.StartMute(t)
	return imapconn.Side{Server: imapconn.Server{Host: mute.Host, Port: mute.Port, Security: imapconn.SecurityPlain}, Login: "a", Password: "pw"}
}

func TestServerThatNeverGreetsTimesOut(t *testing.T) {
	t.Parallel()
	dst := startMemServer(t, map[string]string{"a": "pw"})
	silent := neverGreets(t)
	start := time.Now()
	_, err := Migrate(context.Background(), Job{
		Source: silent, Destination: dst.side("a", "pw"),
		Tuning: Tuning{GreetingTimeout: 200 * time.Millisecond, Tries: 2, Backoff: 10 * time.Millisecond},
	})
	if err == nil || imapconn.KindOf(err) != imapconn.KindTransient || !strings.Contains(err.Error(), "greeting") {
		t.Fatalf("error %v, want a transient greeting failure", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %s to give up on a silent server", elapsed)
	}
}

func TestUnreachableHostIsTransient(t *testing.T) {
	t.Parallel()
	port := closedPort(t)
	closed := imapconn.Side{Server: imapconn.Server{Host: "127.0.0.1", Port: port, Security: imapconn.SecurityPlain}, Login: "a", Password: "pw"}
	_, err := Migrate(context.Background(), Job{Source: closed, Destination: closed, Tuning: Tuning{Tries: 1}})
	if imapconn.KindOf(err) != imapconn.KindTransient || !strings.Contains(err.Error(), fmt.Sprintf("source a at 127.0.0.1:%d", port)) {
		t.Errorf("error %v, want a transient failure naming the source host and port", err)
	}
}

func TestDroppedConnectionResumesWithoutDuplicates(t *testing.T) {
	t.Parallel()
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	p.src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 11, Messages: 150}))
	// The first two destination connections break in the middle of the
	// copy, one of them mid-APPEND at the latest.
	proxy := startCuttingProxy(t, net.JoinHostPort(p.dst.Host, strconv.Itoa(p.dst.Port)), 400_000, 2)
	p.job.Destination.Port = proxy.port()
	p.job.Tuning = Tuning{Backoff: 10 * time.Millisecond}
	res := p.migrate(t)
	if proxy.conns.Load() < 3 {
		t.Fatalf("the proxy saw %d connections: the fault was not injected", proxy.conns.Load())
	}
	wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))
	t.Logf("copied %d messages over %d connections", res.MessagesCopied, proxy.conns.Load())
}

// A cancel while a server has not greeted yet ends the migration at once,
// not after the greeting timeout: on either side, on the main connections
// and on the login check.
func TestCancelWhileWaitingForAGreetingIsPrompt(t *testing.T) {
	t.Parallel()
	mem := startMemServer(t, map[string]string{"a": "pw"})
	silent := neverGreets(t)
	for name, job := range map[string]Job{
		"source":      {Source: silent, Destination: mem.side("a", "pw")},
		"destination": {Source: mem.side("a", "pw"), Destination: silent},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err := Migrate(ctx, job) // the greeting timeout is 30 s
		if elapsed := time.Since(start); err == nil || elapsed > 3*time.Second {
			t.Errorf("%s silent: canceled after 200 ms, returned after %s: %v", name, elapsed.Round(time.Millisecond), err)
		}
		ctx, cancel = context.WithCancel(t.Context())
		time.AfterFunc(200*time.Millisecond, cancel)
		start = time.Now()
		err = CheckLogin(ctx, silent, name, Tuning{})
		if elapsed := time.Since(start); err == nil || elapsed > 3*time.Second {
			t.Errorf("login check of a silent %s: canceled after 200 ms, returned after %s: %v", name, elapsed.Round(time.Millisecond), err)
		}
	}
}
