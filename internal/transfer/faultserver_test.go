package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// faultOptions say how a faultServer departs from a well-behaved server.
// The zero value announces memServer's capabilities and nothing else.
type faultOptions struct {
	Login, Password string // "a" and "pw" when empty
	// Caps is exactly what the server announces (with AUTH= before the
	// login), and it behaves accordingly: without UIDPLUS no APPENDUID,
	// COPYUID nor UID EXPUNGE; without LITERAL+ (or LITERAL- up to 4096
	// bytes) a non-synchronizing literal is answered BAD and the
	// connection closed; UNSELECT, ENABLE, IDLE, NAMESPACE, MOVE and LIST
	// options of extensions not announced are answered BAD. nil: IMAP4rev1
	// NAMESPACE UIDPLUS LIST-EXTENDED LITERAL+. Never MULTIAPPEND, which
	// imapserver does not implement.
	Caps imap.CapSet
	// Folders are created in this order, which LIST keeps, with the
	// attributes LIST shows, in plain LIST too; \Subscribed among them
	// subscribes the folder. INBOX comes first unless it is among them.
	// Only Mailbox and Attrs count; the delimiter is "/".
	Folders []imap.ListData
	// AppendLimit refuses a larger message with NO [TOOBIG] before asking
	// for it (RFC 7889); announced only with APPENDLIMIT in Caps.
	AppendLimit uint32
	// RefuseAppend, when it returns an error (an *imap.Error for a NO),
	// refuses an APPEND once its message is read; the connection stays
	// usable.
	RefuseAppend func(body []byte) error
	// RewriteAppend, when set, changes each appended message before it is
	// stored, as a destination that rewrites mail does (Cyrus' munge8bit
	// turns 8-bit header bytes into "X").
	RewriteAppend func(body []byte) []byte
	// RefuseFetch marks messages no FETCH of a body reads: the FETCH
	// answers the others, then NO. The mark follows a COPY.
	RefuseFetch func(body []byte) bool
	// SilentAfter > 0: the server answers that many commands, counted over
	// all connections, then stops on the connection that sends the next
	// one: it reads and answers nothing more, and keeps it open. The
	// silences of this and the next two options strike once: later
	// connections are served.
	SilentAfter int
	// SilentInAppend > 0: the APPEND of that number stops halfway through
	// its message.
	SilentInAppend int
	// SilentInFetch > 0: the FETCH of message bodies of that number
	// answers its first message and stops.
	SilentInFetch int
	// IdleTimeout > 0 closes a connection on the faulty port that sent
	// nothing for that long, as servers log out idle clients (RFC 9051
	// §5.4), often much sooner than the 30 minutes it asks for.
	IdleTimeout time.Duration
	// PermanentFlags, when set, is what SELECT announces as PERMANENTFLAGS
	// (RFC 9051 §7.1): a server that keeps only these keywords. Flags
	// stored anyway are kept: it is the client's job to send none else.
	PermanentFlags []imap.Flag
}

func (o *faultOptions) setDefaults() {
	if o.Login == "" {
		o.Login, o.Password = "a", "pw"
	}
	if o.Caps == nil {
		o.Caps = imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapNamespace: {}, imap.CapUIDPlus: {},
			imap.CapListExtended: {}, imap.CapLiteralPlus: {}}
	}
	if !slices.ContainsFunc(o.Folders, func(f imap.ListData) bool { return f.Mailbox == "INBOX" }) {
		o.Folders = append([]imap.ListData{{Mailbox: "INBOX"}}, o.Folders...)
	}
}

func (o *faultOptions) check() error {
	switch caps := o.Caps; {
	case caps.Has(imap.CapMultiAppend):
		return errors.New("faultServer: imapserver has no MULTIAPPEND (RFC 3502) to announce")
	case caps.Has(imap.CapMove) && !caps.Has(imap.CapUIDPlus):
		return errors.New("faultServer: imapserver's MOVE sends COPYUID even without UIDPLUS")
	case caps.Has(imap.CapMove) && o.RefuseFetch != nil:
		return errors.New("faultServer: RefuseFetch's marks do not follow a MOVE")
	}
	return nil
}

// faultServer is go-imap's in-memory server for one user on a loopback
// port, made to behave unlike Dovecot as its faultOptions say. A second,
// clean port serves the same folders without faults, for the test's own
// reading (read) and for a comparison.
type faultServer struct {
	addr, cleanAddr *net.TCPAddr
	opts            faultOptions
	user            *imapmemserver.User
	// Counted on the faulty port, over all its connections.
	commands, appends, fetches, loginCount atomic.Int64

	mu      sync.Mutex
	folders []*faultFolder
}

func startFaultServer(t *testing.T, opts faultOptions) *faultServer {
	t.Helper()
	opts.setDefaults()
	if err := opts.check(); err != nil {
		t.Fatal(err)
	}
	fs := &faultServer{opts: opts, user: imapmemserver.NewUser(opts.Login, opts.Password)}
	for _, f := range opts.Folders {
		fs.addFolder(t, f.Mailbox, f.Attrs...)
	}
	fs.addr = fs.serve(t, opts.Caps, true)
	fs.cleanAddr = fs.serve(t, imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapNamespace: {}, imap.CapUIDPlus: {},
		imap.CapListExtended: {}, imap.CapSpecialUse: {}, imap.CapCreateSpecialUse: {}, imap.CapLiteralPlus: {}}, false)
	return fs
}

// serve runs an imapserver announcing caps until the test ends.
func (fs *faultServer) serve(t *testing.T, caps imap.CapSet, faulty bool) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if faulty {
		ln = faultListener{Listener: ln, fs: fs}
	}
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(conn *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return fs.newSession(conn, caps), nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	})
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return addr
}

// side is the faulty port as the engine reaches it.
func (fs *faultServer) side() imapconn.Side {
	return imapconn.Side{Server: imapconn.Server{Host: "127.0.0.1", Port: fs.addr.Port, Security: imapconn.SecurityPlain},
		Login: fs.opts.Login, Password: fs.opts.Password}
}

// dial logs in on the faulty port; dialClean on the clean one.
func (fs *faultServer) dial(t *testing.T) *imapclient.Client {
	t.Helper()
	return fs.login(t, fs.addr)
}

func (fs *faultServer) dialClean(t *testing.T) *imapclient.Client {
	t.Helper()
	return fs.login(t, fs.cleanAddr)
}

func (fs *faultServer) login(t *testing.T, addr *net.TCPAddr) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(addr.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(fs.opts.Login, fs.opts.Password).Wait(); err != nil {
		t.Fatal(err)
	}
	return c
}

// addFolder creates a folder, listed after the others, with attrs.
func (fs *faultServer) addFolder(t *testing.T, name string, attrs ...imap.MailboxAttr) {
	t.Helper()
	if err := fs.createFolder(name, attrs); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// faultMessage is a message as a faultServer's helpers seed and read it.
// Its body must be a message (header, empty line, text): go-imap's
// in-memory server answers BODY[] of anything else with nothing.
type faultMessage struct {
	UID   imap.UID // read only; seed leaves it out
	Flags []imap.Flag
	Date  time.Time
	Body  string
}

// seed stores messages in folder past the faulty port: no fault and no
// command counted. RefuseFetch marks those it refuses as usual.
func (fs *faultServer) seed(t *testing.T, folder string, msgs ...faultMessage) []imap.UID {
	t.Helper()
	uids := make([]imap.UID, len(msgs))
	for i, m := range msgs {
		data, err := fs.store(folder, []byte(m.Body), &imap.AppendOptions{Flags: m.Flags, Time: m.Date})
		if err != nil {
			t.Fatalf("seed %s: %v", folder, err)
		}
		uids[i] = data.UID
	}
	return uids
}

// read returns every message of folder in UID order, read on the clean
// port, flags sorted.
func (fs *faultServer) read(t *testing.T, folder string) []faultMessage {
	t.Helper()
	c := fs.dialClean(t)
	if _, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatalf("select %s: %v", folder, err)
	}
	var all imap.UIDSet
	all.AddRange(1, 0)
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(all, &imap.FetchOptions{UID: true, Flags: true, InternalDate: true,
		BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		t.Fatalf("read %s: %v", folder, err)
	}
	out := make([]faultMessage, len(msgs))
	for i, m := range msgs {
		out[i] = faultMessage{UID: m.UID, Flags: slices.Sorted(slices.Values(m.Flags)),
			Date: m.InternalDate, Body: string(m.FindBodySection(section))}
	}
	return out
}

// TestFaultServerBehaves proves that each of faultServer's options does
// what it says, with go-imap's client or with raw commands.
func TestFaultServerBehaves(t *testing.T) {
	t.Parallel()
	for _, test := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"caps", testFaultCaps},
		{"uidplus", testFaultUIDPlus},
		{"literals", testFaultLiterals},
		{"refusedAppend", testFaultRefusedAppend},
		{"refusedFetch", testFaultRefusedFetch},
		{"listing", testFaultListing},
		{"silence", testFaultSilence},
	} {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			test.run(t)
		})
	}
}

// faultCaps is IMAP4rev1 and caps.
func faultCaps(caps ...imap.Cap) imap.CapSet {
	set := imap.CapSet{imap.CapIMAP4rev1: {}}
	for _, c := range caps {
		set[c] = struct{}{}
	}
	return set
}

func testFaultCaps(t *testing.T) {
	fs := startFaultServer(t, faultOptions{Caps: faultCaps(imap.CapUIDPlus)})
	w := fs.wire(t)
	w.send("1 LOGIN a pw\r\n2 CAPABILITY\r\n3 NAMESPACE\r\n4 UNSELECT\r\n5 IDLE\r\n6 NOOP\r\n")
	w.want("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] IMAP server ready",
		"1 OK [CAPABILITY IMAP4rev1 UIDPLUS] Logged in",
		"* CAPABILITY IMAP4rev1 UIDPLUS", "2 OK CAPABILITY completed",
		"3 BAD Unknown command", "4 BAD Unknown command", "5 BAD Unknown command", "6 OK NOOP completed")
	c := fs.dial(t)
	if got := slices.Sorted(maps.Keys(c.Caps())); !slices.Equal(got, []imap.Cap{imap.CapIMAP4rev1, imap.CapUIDPlus}) {
		t.Errorf("go-imap's client sees %v", got)
	}
}

// testFaultUIDPlus: APPENDUID, COPYUID and UID EXPUNGE with UIDPLUS only.
func testFaultUIDPlus(t *testing.T) {
	for _, uidPlus := range []bool{false, true} {
		caps := faultCaps(imap.CapLiteralPlus)
		want := []string{"A OK APPEND completed", "C OK COPY completed", "E BAD Unknown command"}
		if uidPlus {
			caps[imap.CapUIDPlus] = struct{}{}
			want = []string{"A OK [APPENDUID 1 1] APPEND completed", "C OK [COPYUID 2 1 1] COPY completed", "E OK UID EXPUNGE completed"}
		}
		fs := startFaultServer(t, faultOptions{Caps: caps, Folders: []imap.ListData{{Mailbox: "Other"}}})
		w := fs.wire(t)
		w.login()
		appended := w.command("A APPEND INBOX {3+}\r\nabc")
		w.command("S SELECT INBOX")
		got := []string{appended, w.command("C UID COPY 1 Other"), w.command("E UID EXPUNGE 1")}
		if !slices.Equal(got, want) {
			t.Errorf("with UIDPLUS %v:\n%q\nwant\n%q", uidPlus, got, want)
		}
	}
}

// testFaultLiterals: {n+} only with LITERAL+, or LITERAL- up to 4096
// bytes; a message over AppendLimit is refused before it is sent, or
// dropped when it comes unasked, and the connection goes on.
func testFaultLiterals(t *testing.T) {
	w := startFaultServer(t, faultOptions{Caps: faultCaps()}).wire(t)
	w.login()
	w.send("B APPEND INBOX {3}\r\n")
	w.want("+ Ready for literal data")
	w.send("abc\r\nA APPEND INBOX {3+}\r\nabc\r\n")
	w.want("B OK APPEND completed", "A BAD Non-synchronizing literal without LITERAL+")
	if rest, err := w.drain(time.Second); err != io.EOF {
		t.Errorf("after the BAD: %q, %v; want the connection closed", rest, err)
	}

	w = startFaultServer(t, faultOptions{Caps: faultCaps(imap.CapLiteralMinus)}).wire(t)
	w.login()
	w.send("A APPEND INBOX {3+}\r\nabc\r\nB APPEND INBOX {4097+}\r\n" + strings.Repeat("x", 4097) + "\r\n")
	w.want("A OK APPEND completed", "B BAD Non-synchronizing literal without LITERAL+")

	for _, c := range []struct {
		caps imap.CapSet
		send string
	}{
		{faultCaps(imap.CapLiteralPlus), "A APPEND INBOX {20+}\r\n" + strings.Repeat("x", 20) + "\r\nB NOOP\r\n"},
		{faultCaps(), "A APPEND INBOX {20}\r\nB NOOP\r\n"},
	} {
		w = startFaultServer(t, faultOptions{Caps: c.caps, AppendLimit: 10}).wire(t)
		w.login()
		w.send(c.send)
		w.want("A NO [TOOBIG] Literals are limited to 10 bytes for this command", "B OK NOOP completed")
	}
}

func testFaultRefusedAppend(t *testing.T) {
	limit := &imap.Error{Type: imap.StatusResponseTypeNo, Code: "LIMIT", Text: "Mail size is larger than the maximum size allowed"}
	for _, caps := range []imap.CapSet{nil, faultCaps()} { // with LITERAL+ and without
		fs := startFaultServer(t, faultOptions{Caps: caps, RefuseAppend: func(body []byte) error {
			if bytes.Contains(body, []byte("huge")) {
				return limit
			}
			return nil
		}})
		c := fs.dial(t)
		var errs []error
		for _, subject := range []string{"one", "huge", "two"} {
			errs = append(errs, faultAppend(c, "INBOX", "Subject: "+subject+"\r\n\r\n"))
		}
		var imapErr *imap.Error
		if errs[0] != nil || errs[2] != nil || !errors.As(errs[1], &imapErr) || imapErr.Code != "LIMIT" {
			t.Errorf("APPEND results %v, want only the huge one refused with [LIMIT]", errs)
		}
		if got := fs.read(t, "INBOX"); len(got) != 2 || got[0].Body != "Subject: one\r\n\r\n" || got[1].Body != "Subject: two\r\n\r\n" {
			t.Errorf("INBOX holds %+v", got)
		}
	}
}

func faultAppend(c *imapclient.Client, folder, body string) error {
	cmd := c.Append(folder, int64(len(body)), nil)
	if _, err := cmd.Write([]byte(body)); err != nil {
		return err
	}
	if err := cmd.Close(); err != nil {
		return err
	}
	_, err := cmd.Wait()
	return err
}

// testFaultRefusedFetch: the readable messages, then NO; on a copy too;
// FETCH without bodies and the clean port unaffected.
func testFaultRefusedFetch(t *testing.T) {
	fs := startFaultServer(t, faultOptions{Folders: []imap.ListData{{Mailbox: "Copies"}},
		RefuseFetch: func(body []byte) bool { return bytes.Contains(body, []byte("broken")) }})
	fs.seed(t, "INBOX", faultMessage{Body: "Subject: 1\r\n\r\nfine\r\n"},
		faultMessage{Body: "Subject: 2\r\n\r\nbroken\r\n"}, faultMessage{Body: "Subject: 3\r\n\r\nfine\r\n"})
	c := fs.dial(t)
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	bodies := &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{{Peek: true}}}
	if uids, err := faultFetch(c, bodies); !slices.Equal(uids, []imap.UID{1, 3}) || !isNo(err) {
		t.Errorf("body FETCH: UIDs %v, %v; want 1 and 3, then NO", uids, err)
	}
	if uids, err := faultFetch(c, &imap.FetchOptions{UID: true, Flags: true}); len(uids) != 3 || err != nil {
		t.Errorf("FLAGS FETCH: UIDs %v, %v; want all three", uids, err)
	}
	if _, err := c.Copy(imap.UIDSetNum(2), "Copies").Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Select("Copies", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	if uids, err := faultFetch(c, bodies); len(uids) != 0 || !isNo(err) {
		t.Errorf("body FETCH of the copy: UIDs %v, %v; want none, then NO", uids, err)
	}
	if n := len(fs.read(t, "INBOX")); n != 3 {
		t.Errorf("the clean port reads %d messages, want 3", n)
	}
}

// faultFetch fetches every message of the selected folder.
func faultFetch(c *imapclient.Client, options *imap.FetchOptions) ([]imap.UID, error) {
	var all imap.UIDSet
	all.AddRange(1, 0)
	msgs, err := c.Fetch(all, options).Collect()
	uids := make([]imap.UID, len(msgs))
	for i, m := range msgs {
		uids[i] = m.UID
	}
	return uids, err
}

func isNo(err error) bool {
	var imapErr *imap.Error
	return errors.As(err, &imapErr) && imapErr.Type == imap.StatusResponseTypeNo
}

func testFaultListing(t *testing.T) {
	sent := imap.ListData{Mailbox: "Sent", Attrs: []imap.MailboxAttr{imap.MailboxAttrSent}}
	junk := imap.ListData{Mailbox: "Junk", Attrs: []imap.MailboxAttr{imap.MailboxAttrJunk, imap.MailboxAttrSubscribed}}
	both := &imap.ListOptions{ReturnSubscribed: true, ReturnSpecialUse: true}
	for _, c := range []struct {
		folders []imap.ListData
		options *imap.ListOptions
		want    string
	}{
		{[]imap.ListData{{Mailbox: "Drafts"}, {Mailbox: "Entwürfe"}}, nil, "INBOX Drafts Entwürfe New"},
		{[]imap.ListData{{Mailbox: "Entwürfe"}, {Mailbox: "Drafts"}}, nil, "INBOX Entwürfe Drafts New"},
		{[]imap.ListData{sent, {Mailbox: "INBOX"}, junk}, nil, `Sent(\Sent) INBOX Junk(\Junk) New`},
		{[]imap.ListData{sent, {Mailbox: "INBOX"}, junk}, both, `Sent(\Sent) INBOX Junk(\Junk \Subscribed) New`},
	} {
		fs := startFaultServer(t, faultOptions{Folders: c.folders,
			Caps: faultCaps(imap.CapListExtended, imap.CapSpecialUse)})
		cl := fs.dial(t)
		if err := cl.Create("New", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		if got := faultList(t, cl, c.options); got != c.want {
			t.Errorf("LIST %+v: %s, want %s", c.options, got, c.want)
		}
	}
	cl := startFaultServer(t, faultOptions{}).dial(t)
	if _, err := cl.List("", "*", &imap.ListOptions{ReturnSpecialUse: true}).Collect(); err == nil {
		t.Error("RETURN (SPECIAL-USE) without SPECIAL-USE is answered")
	}
}

// faultList lists every folder: names in order, attributes in brackets.
func faultList(t *testing.T, c *imapclient.Client, options *imap.ListOptions) string {
	t.Helper()
	listed, err := c.List("", "*", options).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range listed {
		name := l.Mailbox
		if len(l.Attrs) > 0 {
			name += fmt.Sprint(l.Attrs)
		}
		names = append(names, strings.ReplaceAll(strings.ReplaceAll(name, "[", "("), "]", ")"))
	}
	return strings.Join(names, " ")
}

// testFaultSilence: each silence keeps the connection open and answers
// nothing; the next connection is served.
func testFaultSilence(t *testing.T) {
	fs := startFaultServer(t, faultOptions{SilentAfter: 2})
	w := fs.wire(t)
	w.send("1 LOGIN a pw\r\n2 NOOP\r\n3 NOOP\r\n")
	w.wantQuiet("* OK", "1 OK", "2 OK NOOP completed")
	fs.wire(t).login()

	fs = startFaultServer(t, faultOptions{Caps: faultCaps(), SilentInAppend: 2})
	w = fs.wire(t)
	w.login()
	w.command("A APPEND INBOX {1}\r\na")
	w.send("B APPEND INBOX {1000}\r\n")
	w.want("+ Ready for literal data")
	w.send(strings.Repeat("b", 1000) + "\r\n")
	w.wantQuiet()
	if got := fs.read(t, "INBOX"); len(got) != 1 {
		t.Errorf("INBOX holds %d messages, want the first one", len(got))
	}

	fs = startFaultServer(t, faultOptions{SilentInFetch: 1})
	fs.seed(t, "INBOX", faultMessage{Body: "Subject: 1\r\n\r\n"}, faultMessage{Body: "Subject: 2\r\n\r\n"})
	w = fs.wire(t)
	w.login()
	w.command("S SELECT INBOX")
	w.send("F UID FETCH 1:* (UID BODY.PEEK[])\r\n")
	w.wantQuiet("* 1 FETCH (UID 1 BODY[] {14}", "Subject: 1", "", ")")
}

// faultWire is a raw client on a faultServer's faulty port: the
// self-test's view of the exact bytes.
type faultWire struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func (fs *faultServer) wire(t *testing.T) *faultWire {
	t.Helper()
	conn, err := net.Dial("tcp", fs.addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &faultWire{t: t, conn: conn, r: bufio.NewReader(conn)}
}

func (w *faultWire) send(s string) {
	w.t.Helper()
	if _, err := io.WriteString(w.conn, s); err != nil {
		w.t.Fatal(err)
	}
}

// line reads a line, without its CRLF.
func (w *faultWire) line() string {
	w.t.Helper()
	w.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := w.r.ReadString('\n')
	if err != nil {
		w.t.Fatalf("after %q: %v", s, err)
	}
	return strings.TrimSuffix(s, "\r\n")
}

// want reads a line for each of lines, which each read line must start
// with.
func (w *faultWire) want(lines ...string) {
	w.t.Helper()
	for _, want := range lines {
		if got := w.line(); !strings.HasPrefix(got, want) {
			w.t.Fatalf("read %q, want %q", got, want)
		}
	}
}

// wantQuiet reads lines as want does, then nothing for a while, with the
// connection open.
func (w *faultWire) wantQuiet(lines ...string) {
	w.t.Helper()
	w.want(lines...)
	if rest, err := w.drain(300 * time.Millisecond); rest != "" || err != nil {
		w.t.Fatalf("then read %q, %v; want silence", rest, err)
	}
}

// drain reads until nothing comes for d: io.EOF if the server closed the
// connection.
func (w *faultWire) drain(d time.Duration) (string, error) {
	var got []byte
	buf := make([]byte, 4096)
	for {
		w.conn.SetReadDeadline(time.Now().Add(d))
		n, err := w.r.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return string(got), nil
		}
		if err != nil {
			return string(got), err
		}
	}
}

// login reads the greeting and logs in.
func (w *faultWire) login() {
	w.t.Helper()
	w.want("* OK ")
	w.send("L LOGIN a pw\r\n")
	w.want("L OK ")
}

// command sends a command and returns its tagged answer, read past the
// untagged ones.
func (w *faultWire) command(text string) string {
	w.t.Helper()
	tag, _, _ := strings.Cut(text, " ")
	w.send(text + "\r\n")
	for {
		if line := w.line(); strings.HasPrefix(line, tag+" ") {
			return line
		}
	}
}
