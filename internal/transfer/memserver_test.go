package transfer

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// memServer is go-imap's in-memory server on a loopback port: quick unit
// tests of the engine. The behaviour of real servers is proven against
// Dovecot.
type memServer struct {
	addr *net.TCPAddr
}

func startMemServer(t *testing.T, users map[string]string) *memServer {
	t.Helper()
	return startMemServerWith(t, users, imap.CapSet{
		imap.CapIMAP4rev1: {}, imap.CapNamespace: {}, imap.CapUIDPlus: {},
		imap.CapListExtended: {}, imap.CapLiteralPlus: {},
	})
}

// startMemServerWith runs the in-memory server announcing caps.
func startMemServerWith(t *testing.T, users map[string]string, caps imap.CapSet) *memServer {
	t.Helper()
	mem := imapmemserver.New()
	for login, password := range users {
		u := imapmemserver.NewUser(login, password)
		if err := u.Create("INBOX", nil); err != nil {
			t.Fatal(err)
		}
		mem.AddUser(u)
	}
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		Logger:       discardLogger{},
	})
	return &memServer{addr: serveIMAP(t, srv)}
}

// serveIMAP runs srv on a loopback port until the test ends.
func serveIMAP(t *testing.T, srv *imapserver.Server) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr)
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

func (m *memServer) side(login, password string) imapconn.Side {
	return imapconn.Side{Server: imapconn.Server{Host: "127.0.0.1", Port: m.addr.Port, Security: imapconn.SecurityPlain}, Login: login, Password: password}
}

func (m *memServer) client(t *testing.T, login, password string) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(m.addr.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Login(login, password).Wait(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testMessage is a message as a test writes and reads it.
type testMessage struct {
	Flags []imap.Flag
	Date  time.Time
	Body  string
}

func appendMessages(t *testing.T, c *imapclient.Client, folder string, messages ...testMessage) {
	t.Helper()
	for _, msg := range messages {
		cmd := c.Append(folder, int64(len(msg.Body)), &imap.AppendOptions{Flags: msg.Flags, Time: msg.Date})
		if _, err := cmd.Write([]byte(msg.Body)); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

// readFolder returns every message of folder, in UID order.
func readFolder(t *testing.T, c *imapclient.Client, folder string) []testMessage {
	t.Helper()
	if _, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatalf("select %s: %v", folder, err)
	}
	var all imap.UIDSet
	all.AddRange(1, 0)
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(all, &imap.FetchOptions{UID: true, Flags: true, InternalDate: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]testMessage, len(msgs))
	for i, m := range msgs {
		out[i] = testMessage{Flags: withoutRecent(m.Flags), Date: m.InternalDate, Body: string(m.FindBodySection(section))}
	}
	return out
}

// withoutRecent returns flags sorted, without \Recent (the server's own).
func withoutRecent(flags []imap.Flag) []imap.Flag {
	var out []imap.Flag
	for _, f := range flags {
		if f != `\Recent` {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

func mail(id, subject string, size int) string {
	header := fmt.Sprintf("From: a@example.com\r\nTo: b@example.com\r\nSubject: %s\r\n", subject)
	if id != "" {
		header += "Message-ID: <" + id + ">\r\n"
	}
	body := make([]byte, size)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	return header + "\r\n" + string(body) + "\r\n"
}

func TestMigrateCopiesAndThenOnlyWhatIsNew(t *testing.T) {
	t.Parallel()
	src := startMemServer(t, map[string]string{"alice": "pw1"})
	dst := startMemServer(t, map[string]string{"alice2": "pw2"})
	sc := src.client(t, "alice", "pw1")
	date := time.Date(2021, 3, 4, 5, 6, 7, 0, time.FixedZone("", 2*3600))
	dup := mail("dup@x", "twice", 100)
	appendMessages(t, sc, "INBOX",
		testMessage{Flags: []imap.Flag{imap.FlagSeen, "$Label1"}, Date: date, Body: mail("1@x", "one", 10)},
		testMessage{Date: date.Add(time.Hour), Body: mail("", "no id", 20)},
		testMessage{Flags: []imap.Flag{imap.FlagFlagged}, Date: date, Body: dup},
		testMessage{Flags: []imap.Flag{imap.FlagFlagged}, Date: date, Body: dup},
		testMessage{Flags: []imap.Flag{imap.FlagDeleted}, Date: date, Body: mail("gone@x", "deleted", 5)},
	)
	job := Job{Source: src.side("alice", "pw1"), Destination: dst.side("alice2", "pw2"), State: syncstate.NewMemoryState()}
	res, err := Migrate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if res.MessagesCopied != 4 || res.MessagesSkipped != 1 {
		t.Errorf("first run: copied %d skipped %d, want 4 and 1 (the \\Deleted one)", res.MessagesCopied, res.MessagesSkipped)
	}
	dc := dst.client(t, "alice2", "pw2")
	got := readFolder(t, dc, "INBOX")
	want := readFolder(t, sc, "INBOX")[:4]
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("destination:\n%v\nwant\n%v", got, want)
	}
	if len(res.Folders) != 1 || !res.Folders[0].Verified() || res.Folders[0].SourceMessages != 4 {
		t.Errorf("verification: %+v", res.Folders)
	}

	// A second run with the state copies nothing and fetches nothing.
	res2, err := Migrate(context.Background(), job)
	if err != nil || res2.MessagesCopied != 0 || res2.MessagesTotal != 0 {
		t.Errorf("second run: %+v %v", res2.Progress, err)
	}
	// A new message is the only one copied by the third.
	appendMessages(t, sc, "INBOX", testMessage{Date: date, Body: mail("new@x", "new", 30)})
	res3, err := Migrate(context.Background(), job)
	if err != nil || res3.MessagesCopied != 1 {
		t.Errorf("third run: %+v %v", res3.Progress, err)
	}
	if n := len(readFolder(t, dc, "INBOX")); n != 5 {
		t.Errorf("destination has %d messages, want 5", n)
	}
	// Without the state (lost, or UIDVALIDITY changed) identities still
	// prevent any duplicate.
	job.State = syncstate.NewMemoryState()
	res4, err := Migrate(context.Background(), job)
	if err != nil || res4.MessagesCopied != 0 {
		t.Errorf("run without state: %+v %v", res4.Progress, err)
	}
}

func TestWrongPasswordFailsAtOnceAsAuth(t *testing.T) {
	t.Parallel()
	src := startMemServer(t, map[string]string{"alice": "pw1"})
	dst := startMemServer(t, map[string]string{"bob": "pw2"})
	start := time.Now()
	_, err := Migrate(context.Background(), Job{Source: src.side("alice", "wrong"), Destination: dst.side("bob", "pw2")})
	if imapconn.KindOf(err) != imapconn.KindAuth {
		t.Fatalf("error %v, want an authentication failure", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %s: an authentication failure must not be retried", time.Since(start))
	}
	want := fmt.Sprintf("source alice at 127.0.0.1:%d: authentication failed: ", src.addr.Port)
	if got := err.Error(); len(got) <= len(want) || got[:len(want)] != want {
		t.Errorf("error text %q, want it to start %q", got, want)
	}
}

// TestChangedOptionsVoidTheState: a message left out by a size limit is
// copied by a later run without the limit, although the folder did not
// change: the state was written for other filters.
func TestChangedOptionsVoidTheState(t *testing.T) {
	t.Parallel()
	src := startMemServer(t, map[string]string{"a": "pw"})
	dst := startMemServer(t, map[string]string{"a": "pw"})
	date := time.Date(2022, 2, 2, 2, 2, 2, 0, time.UTC)
	appendMessages(t, src.client(t, "a", "pw"), "INBOX",
		testMessage{Date: date, Body: mail("small@x", "small", 10)},
		testMessage{Date: date, Body: mail("big@x", "big", 5000)},
	)
	job := Job{Source: src.side("a", "pw"), Destination: dst.side("a", "pw"), Options: Options{MaxMessageBytes: 1000}, State: syncstate.NewMemoryState()}
	res, err := Migrate(context.Background(), job)
	if err != nil || res.MessagesCopied != 1 {
		t.Fatalf("with a size limit: copied %d, %v", res.MessagesCopied, err)
	}
	job.Options = Options{}
	res, err = Migrate(context.Background(), job)
	if err != nil || res.MessagesCopied != 1 {
		t.Fatalf("without the limit: copied %d, %v; want the big message", res.MessagesCopied, err)
	}
	if n := len(readFolder(t, dst.client(t, "a", "pw"), "INBOX")); n != 2 {
		t.Errorf("destination has %d messages, want 2", n)
	}
}
