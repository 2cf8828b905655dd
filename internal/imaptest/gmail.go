package imaptest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// GmailServer is an in-memory IMAP server that shows one mailbox as
// Gmail does, as Google's "IMAP Extensions" page
// (developers.google.com/gmail/imap/imap-extensions) and its Gmail help
// pages ("Use labels", "IMAP: Gmail bandwidth limits") describe:
//   - It announces X-GM-EXT-1 and answers X-GM-LABELS and X-GM-MSGID in
//     a UID FETCH (system labels as Gmail sends them, quoted: "\\Inbox").
//   - Labels are folders: a message is in "[Gmail]/All Mail" (\All) and in
//     the folder of each of its labels: INBOX (\Inbox), "[Gmail]/Sent Mail"
//     (\Sent), "[Gmail]/Drafts" (\Draft), "[Gmail]/Starred" (\Starred,
//     with the \Flagged flag), "[Gmail]/Important" (\Important) and each
//     user label's folder. A message in "[Gmail]/Spam" or "[Gmail]/Trash"
//     is in no other folder. Archived mail is in All Mail alone.
//   - An APPEND to a label's folder is a new message with that label,
//     in All Mail too.
//   - After BandwidthFetches FETCHes of bodies, the account is over its
//     bandwidth for BandwidthLock: every FETCH and SELECT is answered
//     "NO [ALERT] Account exceeded command or bandwidth limits. (Failure)".
//
// It does not model expunges, moves or flag changes across folders: the
// folders of one message are separate copies to the server underneath.
type GmailServer struct {
	Host     string
	Port     int
	Login    string
	Password string

	user *imapmemserver.User
	opts GmailOptions

	mu       sync.Mutex
	folders  map[string]*gmailFolder
	messages []*gmailMessage
	fetches  int       // body FETCHes so far
	locked   time.Time // over the bandwidth until then
	refused  int       // commands refused for bandwidth
}

// GmailOptions shape a GmailServer.
type GmailOptions struct {
	Login, Password string
	// BandwidthFetches, when not 0, is how many FETCHes of bodies the
	// account may make before it is locked for BandwidthLock.
	BandwidthFetches int
	BandwidthLock    time.Duration
}

// GmailMessage is a message to deliver, with its labels: `\Inbox`,
// `\Sent`, `\Draft`, `\Starred`, `\Important`, `\Spam`, `\Trash` or a user
// label's name ("Work/Projects"). A message without labels is archived.
type GmailMessage struct {
	Raw    []byte
	Labels []string
	Flags  []imap.Flag
	Date   time.Time
}

type gmailFolder struct {
	attr    imap.MailboxAttr
	entries []gmailEntry // in UID order
}

type gmailEntry struct {
	uid imap.UID
	msg *gmailMessage
}

type gmailMessage struct {
	id     uint64 // X-GM-MSGID
	size   int
	labels []string
}

// The folders of Gmail's system labels, and their roles.
var gmailSystemFolders = []struct {
	label, name string
	attr        imap.MailboxAttr
}{
	{`\Inbox`, "INBOX", ""},
	{"", "[Gmail]/All Mail", imap.MailboxAttrAll},
	{`\Draft`, "[Gmail]/Drafts", imap.MailboxAttrDrafts},
	{`\Important`, "[Gmail]/Important", imap.MailboxAttrImportant},
	{`\Sent`, "[Gmail]/Sent Mail", imap.MailboxAttrSent},
	{`\Spam`, "[Gmail]/Spam", imap.MailboxAttrJunk},
	{`\Starred`, "[Gmail]/Starred", imap.MailboxAttrFlagged},
	{`\Trash`, "[Gmail]/Trash", imap.MailboxAttrTrash},
}

// GmailAllMail is the name of Gmail's All Mail folder.
const GmailAllMail = "[Gmail]/All Mail"

// StartGmail runs a GmailServer until t ends.
func StartGmail(t testing.TB, opts GmailOptions) *GmailServer {
	t.Helper()
	g := &GmailServer{Login: opts.Login, Password: opts.Password, opts: opts,
		user: imapmemserver.NewUser(opts.Login, opts.Password), folders: map[string]*gmailFolder{}}
	for _, f := range gmailSystemFolders {
		g.createFolder(t, f.name, f.attr)
	}
	caps := imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapUIDPlus: {}, imap.CapSpecialUse: {}, imap.CapIdle: {},
		imap.CapMove: {}, imap.CapNamespace: {}} // and X-GM-EXT-1, added by the proxy
	backend := serveSessions(t, caps, func(*imapserver.Conn) imapserver.Session { return &gmailSession{server: g} })
	g.Host, g.Port = gmailProxy(t, g, backend.String())
	return g
}

// serveSessions runs an in-memory IMAP server announcing caps, with a
// session from newSession per connection, until t ends, and returns its
// address.
func serveSessions(t testing.TB, caps imap.CapSet, newSession func(*imapserver.Conn) imapserver.Session) *net.TCPAddr {
	t.Helper()
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(conn *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return newSession(conn), nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		Logger:       quietLogger{},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr)
}

func (g *GmailServer) createFolder(t testing.TB, name string, attr imap.MailboxAttr) {
	if g.folders[name] != nil {
		return
	}
	if err := g.user.Create(name, nil); err != nil {
		t.Fatalf("imaptest: gmail: create %s: %v", name, err)
	}
	g.folders[name] = &gmailFolder{attr: attr}
}

// folderOf returns the folder that shows label.
func folderOf(label string) string {
	for _, f := range gmailSystemFolders {
		if f.label != "" && strings.EqualFold(f.label, label) {
			return f.name
		}
	}
	return label
}

// Add delivers a message with its labels, and returns its number for
// AddLabel.
func (g *GmailServer) Add(t testing.TB, m GmailMessage) int {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	msg := &gmailMessage{id: uint64(len(g.messages) + 1000), size: len(m.Raw)}
	g.messages = append(g.messages, msg)
	flags := slices.Clone(m.Flags)
	if slices.Contains(m.Labels, `\Starred`) {
		flags = append(flags, imap.FlagFlagged)
	}
	outside := slices.Contains(m.Labels, `\Spam`) || slices.Contains(m.Labels, `\Trash`)
	if !outside {
		g.appendTo(t, GmailAllMail, msg, m.Raw, flags, m.Date)
	}
	for _, label := range m.Labels {
		g.addLabel(t, msg, label, m.Raw, flags, m.Date)
	}
	return len(g.messages) - 1
}

// AddLabel labels message n (from Add) with label as well, as a user
// does in Gmail's web interface.
func (g *GmailServer) AddLabel(t testing.TB, n int, label string, raw []byte) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.addLabel(t, g.messages[n], label, raw, nil, time.Time{})
}

func (g *GmailServer) addLabel(t testing.TB, msg *gmailMessage, label string, raw []byte, flags []imap.Flag, date time.Time) {
	msg.labels = append(msg.labels, label)
	name := folderOf(label)
	g.createFolder(t, name, "")
	g.appendTo(t, name, msg, raw, flags, date)
}

func (g *GmailServer) appendTo(t testing.TB, folder string, msg *gmailMessage, raw []byte, flags []imap.Flag, date time.Time) {
	data, err := g.user.Append(folder, literal{bytes.NewReader(raw)}, &imap.AppendOptions{Flags: flags, Time: date})
	if err != nil {
		t.Fatalf("imaptest: gmail: append to %s: %v", folder, err)
	}
	f := g.folders[folder]
	f.entries = append(f.entries, gmailEntry{uid: data.UID, msg: msg})
}

// Count is how many messages a folder shows.
func (g *GmailServer) Count(folder string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.folders[folder]; f != nil {
		return len(f.entries)
	}
	return 0
}

// Labels returns the labels of each message of a folder, in UID order.
func (g *GmailServer) Labels(folder string) [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out [][]string
	if f := g.folders[folder]; f != nil {
		for _, e := range f.entries {
			out = append(out, slices.Clone(e.msg.labels))
		}
	}
	return out
}

// Refused counts the commands refused for the account's bandwidth.
func (g *GmailServer) Refused() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// overBandwidth counts a command that reads the account and says whether
// it must be refused.
func (g *GmailServer) overBandwidth(bodies bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opts.BandwidthFetches == 0 {
		return false
	}
	if time.Now().Before(g.locked) {
		g.refused++
		return true
	}
	if bodies {
		g.fetches++
		if g.fetches > g.opts.BandwidthFetches {
			g.fetches, g.locked = 0, time.Now().Add(g.opts.BandwidthLock)
			g.refused++
			return true
		}
	}
	return false
}

var errGmailBandwidth = &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAlert,
	Text: "Account exceeded command or bandwidth limits. (Failure)"}

// gmailSession is one connection, past its login.
type gmailSession struct {
	*imapmemserver.UserSession
	server   *GmailServer
	selected string
}

func (s *gmailSession) Login(username, password string) error {
	if err := s.server.user.Login(username, password); err != nil {
		return &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAuthenticationFailed,
			Text: "[AUTHENTICATIONFAILED] Invalid credentials (Failure)"}
	}
	s.UserSession = imapmemserver.NewUserSession(s.server.user)
	return nil
}

func (s *gmailSession) Close() error {
	if s.UserSession == nil {
		return nil
	}
	return s.UserSession.Close()
}

// List lists the folders with Gmail's roles (the server underneath
// keeps none), and "[Gmail]" itself, which cannot be selected.
func (s *gmailSession) List(w *imapserver.ListWriter, ref string, patterns []string, options *imap.ListOptions) error {
	s.server.mu.Lock()
	names := make([]string, 0, len(s.server.folders))
	for name := range s.server.folders {
		names = append(names, name)
	}
	s.server.mu.Unlock()
	slices.Sort(names)
	names = append(names, "[Gmail]")
	for _, name := range names {
		if !slices.ContainsFunc(patterns, func(p string) bool { return imapserver.MatchList(name, '/', ref, p) }) {
			continue
		}
		data := &imap.ListData{Mailbox: name, Delim: '/'}
		switch f := s.server.folders[name]; {
		case name == "[Gmail]":
			data.Attrs = []imap.MailboxAttr{imap.MailboxAttrNoSelect, imap.MailboxAttrHasChildren}
		case f.attr != "":
			data.Attrs = []imap.MailboxAttr{imap.MailboxAttrHasNoChildren, f.attr}
		default:
			data.Attrs = []imap.MailboxAttr{imap.MailboxAttrHasNoChildren}
		}
		if err := w.WriteList(data); err != nil {
			return err
		}
	}
	return nil
}

func (s *gmailSession) Select(name string, options *imap.SelectOptions) (*imap.SelectData, error) {
	if s.server.overBandwidth(false) {
		return nil, errGmailBandwidth
	}
	data, err := s.UserSession.Select(name, options)
	if err == nil {
		s.selected = name
	}
	return data, err
}

// Copy into a label's folder labels the messages: each stays one
// message, in All Mail once (Gmail's "IMAP Extensions": COPY adds a label).
func (s *gmailSession) Copy(numSet imap.NumSet, dest string) (*imap.CopyData, error) {
	g := s.server
	if existing := g.labelled(s.selected, numSet, dest); existing != nil {
		return existing, nil
	}
	data, err := s.UserSession.Copy(numSet, dest)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	from, to := g.folders[s.selected], g.folders[dest]
	if from == nil || to == nil {
		return data, nil
	}
	sources, _ := data.SourceUIDs.Nums()
	dests, _ := data.DestUIDs.Nums()
	for i, uid := range sources {
		for _, e := range from.entries {
			if e.uid == uid && i < len(dests) {
				e.msg.labels = append(e.msg.labels, labelOf(dest))
				to.entries = append(to.entries, gmailEntry{uid: dests[i], msg: e.msg})
			}
		}
	}
	return data, nil
}

func (s *gmailSession) Fetch(w *imapserver.FetchWriter, numSet imap.NumSet, options *imap.FetchOptions) error {
	if s.server.overBandwidth(len(options.BodySection) > 0) {
		return errGmailBandwidth
	}
	return s.UserSession.Fetch(w, numSet, options)
}

// Append files a message under the label of its folder, in All Mail
// too; into All Mail itself, an archived message.
func (s *gmailSession) Append(mailbox string, r imap.LiteralReader, options *imap.AppendOptions) (*imap.AppendData, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	g := s.server
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.folders[mailbox]
	if f == nil {
		return nil, &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeTryCreate, Text: "Folder doesn't exist. (Failure)"}
	}
	msg := &gmailMessage{id: uint64(len(g.messages) + 1000), size: len(raw)}
	g.messages = append(g.messages, msg)
	var data *imap.AppendData
	add := func(folder string) error {
		d, err := g.user.Append(folder, literal{bytes.NewReader(raw)}, options)
		if err != nil {
			return err
		}
		g.folders[folder].entries = append(g.folders[folder].entries, gmailEntry{uid: d.UID, msg: msg})
		if folder == mailbox {
			data = d
		}
		return nil
	}
	if f.attr != imap.MailboxAttrAll && f.attr != imap.MailboxAttrJunk && f.attr != imap.MailboxAttrTrash {
		msg.labels = append(msg.labels, labelOf(mailbox))
		if err := add(GmailAllMail); err != nil {
			return nil, err
		}
	}
	if err := add(mailbox); err != nil {
		return nil, err
	}
	return data, nil
}

// Create makes a label.
func (s *gmailSession) Create(name string, options *imap.CreateOptions) error {
	if err := s.UserSession.Create(name, options); err != nil {
		return err
	}
	s.server.mu.Lock()
	defer s.server.mu.Unlock()
	s.server.folders[name] = &gmailFolder{}
	return nil
}

// labelled answers a COPY of one message into a folder whose label it
// has already, as Gmail does: nothing new, the UID it has there.
func (g *GmailServer) labelled(folder string, numSet imap.NumSet, dest string) *imap.CopyData {
	set, ok := numSet.(imap.UIDSet)
	uids, static := set.Nums()
	if !ok || !static || len(uids) != 1 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	from, to := g.folders[folder], g.folders[dest]
	if from == nil || to == nil {
		return nil
	}
	for _, e := range from.entries {
		if e.uid != uids[0] {
			continue
		}
		for _, there := range to.entries {
			if there.msg == e.msg {
				var src, dst imap.UIDSet
				src.AddNum(e.uid)
				dst.AddNum(there.uid)
				status, err := g.user.Status(dest, &imap.StatusOptions{UIDValidity: true})
				if err != nil {
					return nil
				}
				return &imap.CopyData{UIDValidity: status.UIDValidity, SourceUIDs: src, DestUIDs: dst}
			}
		}
	}
	return nil
}

// labelOf is the label a folder shows.
func labelOf(folder string) string {
	for _, f := range gmailSystemFolders {
		if f.name == folder && f.label != "" {
			return f.label
		}
	}
	return folder
}

// labelsFetch answers `UID FETCH set (... X-GM-LABELS ...)` on folder,
// which the server underneath cannot parse.
func (g *GmailServer) labelsFetch(w io.Writer, tag, folder, set string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.folders[folder]
	if f == nil {
		fmt.Fprintf(w, "%s BAD No folder selected. (Failure)\r\n", tag)
		return
	}
	if time.Now().Before(g.locked) {
		g.refused++
		fmt.Fprintf(w, "%s NO [ALERT] %s\r\n", tag, errGmailBandwidth.Text)
		return
	}
	for i, e := range f.entries {
		if !inUIDSet(set, e.uid) {
			continue
		}
		labels := make([]string, 0, len(e.msg.labels))
		for _, l := range e.msg.labels {
			labels = append(labels, quoteLabel(l))
		}
		fmt.Fprintf(w, "* %d FETCH (X-GM-MSGID %d UID %d RFC822.SIZE %d X-GM-LABELS (%s))\r\n",
			i+1, e.msg.id, e.uid, e.msg.size, strings.Join(labels, " "))
	}
	fmt.Fprintf(w, "%s OK Success\r\n", tag)
}

// quoteLabel writes a label as Gmail does: system labels and labels with
// spaces quoted. Labels here are ASCII (Gmail sends others in modified
// UTF-7, as folder names).
func quoteLabel(label string) string {
	encoded := label
	if strings.ContainsAny(encoded, ` \"()`) {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(encoded) + `"`
	}
	return encoded
}

// inUIDSet reports whether uid is in a UID set such as "1:*" or "3,5:7".
func inUIDSet(set string, uid imap.UID) bool {
	for _, part := range strings.Split(set, ",") {
		lo, hi, isRange := strings.Cut(part, ":")
		if !isRange {
			hi = lo
		}
		first, last := parseSetNumber(lo), parseSetNumber(hi)
		if first > last {
			first, last = last, first
		}
		if uint64(uid) >= first && uint64(uid) <= last {
			return true
		}
	}
	return false
}

func parseSetNumber(s string) uint64 {
	if s == "*" {
		return 1<<32 - 1
	}
	n, _ := strconv.ParseUint(s, 10, 32)
	return n
}

// gmailProxy forwards connections to the server at backend, answering
// the UID FETCHes of X-GM-LABELS itself, and returns its address.
func gmailProxy(t testing.TB, g *GmailServer, backend string) (string, int) {
	return proxy(t, backend, func(client, server net.Conn) (toServer, toClient func()) {
		out := &lockedWriter{w: client}
		return func() { g.forwardCommands(bufio.NewReader(client), server, out) },
			func() { forwardResponses(bufio.NewReader(server), out) }
	})
}

// lockedWriter serializes writes to a client from the server's
// responses and the proxy's own answers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// forwardResponses copies the server's responses to the client, literals
// and all, adding X-GM-EXT-1 to the capabilities (the server underneath
// announces only those it knows).
func forwardResponses(server *bufio.Reader, client io.Writer) {
	for {
		line, err := server.ReadString('\n')
		if err != nil {
			return
		}
		if n := literalLength(line); n >= 0 {
			if _, err := io.WriteString(client, line); err != nil {
				return
			}
			if _, err := io.CopyN(client, server, n); err != nil {
				return
			}
			continue
		}
		line = strings.Replace(line, "CAPABILITY IMAP4rev1", "CAPABILITY IMAP4rev1 X-GM-EXT-1", 1)
		if _, err := io.WriteString(client, line); err != nil {
			return
		}
	}
}

// literalLength is the size of the literal a line announces, or -1.
func literalLength(line string) int64 {
	trimmed := strings.TrimRight(line, "\r\n")
	i := strings.LastIndexByte(trimmed, '{')
	if i < 0 || !strings.HasSuffix(trimmed, "}") {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(trimmed[i+1:len(trimmed)-1], "+"), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// forwardCommands copies a client's commands to the server, literals
// and all, keeping track of the selected folder and answering label
// FETCHes itself.
func (g *GmailServer) forwardCommands(client *bufio.Reader, server io.Writer, out io.Writer) {
	selected := ""
	for {
		line, err := client.ReadString('\n')
		if err != nil {
			return
		}
		words := strings.Fields(line)
		if len(words) >= 3 {
			switch verb := strings.ToUpper(words[1]); {
			case verb == "SELECT" || verb == "EXAMINE":
				name := strings.TrimSpace(line[len(words[0])+len(words[1])+2:])
				if unquoted, err := strconv.Unquote(name); err == nil {
					name = unquoted
				}
				selected = name
			case verb == "UID" && strings.EqualFold(words[2], "FETCH") && len(words) >= 4 &&
				strings.Contains(strings.ToUpper(line), "X-GM-LABELS"):
				g.labelsFetch(out, words[0], selected, words[3])
				continue
			}
		}
		if _, err := io.WriteString(server, line); err != nil {
			return
		}
		// A literal follows: copy it, and the rest of the command.
		for n := literalLength(line); n >= 0; n = literalLength(line) {
			if _, err := io.CopyN(server, client, n); err != nil {
				return
			}
			if line, err = client.ReadString('\n'); err != nil {
				return
			}
			if _, err := io.WriteString(server, line); err != nil {
				return
			}
		}
	}
}
