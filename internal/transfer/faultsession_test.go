package transfer

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// faultSession is go-imap's in-memory session with a faultServer's faults
// (on its faulty port, where conn is set) and its folder listing.
type faultSession struct {
	*imapmemserver.UserSession // nil until Login
	fs                         *faultServer
	caps                       imap.CapSet
	conn                       *faultConn // nil on the clean port
	selected                   string
}

// limitedSession refuses a message over faultOptions.AppendLimit before
// asking for it (RFC 7889); imapserver checks the limit of a session that
// has one.
type limitedSession struct{ *faultSession }

func (s limitedSession) AppendLimit() uint32 { return s.fs.opts.AppendLimit }

func (fs *faultServer) newSession(conn *imapserver.Conn, caps imap.CapSet) imapserver.Session {
	s := &faultSession{fs: fs, caps: caps}
	s.conn, _ = conn.NetConn().(*faultConn)
	if s.conn != nil && fs.opts.AppendLimit > 0 {
		return limitedSession{s}
	}
	return s
}

func (s *faultSession) Login(username, password string) error {
	if err := s.fs.user.Login(username, password); err != nil {
		return err
	}
	s.UserSession = imapmemserver.NewUserSession(s.fs.user)
	if s.conn != nil {
		s.fs.loginCount.Add(1)
	}
	return nil
}

// logins counts the logins on the faulty port.
func (fs *faultServer) logins() int { return int(fs.loginCount.Load()) }

func (s *faultSession) Select(name string, options *imap.SelectOptions) (*imap.SelectData, error) {
	data, err := s.UserSession.Select(name, options)
	if err == nil {
		s.selected = name
		if s.conn != nil && s.fs.opts.PermanentFlags != nil {
			data.PermanentFlags = s.fs.opts.PermanentFlags
		}
	}
	return data, err
}

func (s *faultSession) Unselect() error {
	s.selected = ""
	return s.UserSession.Unselect()
}

// Append stores the message unless RefuseAppend refuses it; the
// SilentInAppend-th one on the faulty port reads half the message and
// hangs. The message is read whole first, as a server that checks it
// must. imapserver writes APPENDUID whenever the session returns data,
// whatever the server announces: without UIDPLUS (RFC 4315 §3) there is
// none to return.
func (s *faultSession) Append(mailbox string, r imap.LiteralReader, options *imap.AppendOptions) (*imap.AppendData, error) {
	if s.conn != nil && s.fs.appends.Add(1) == int64(s.fs.opts.SilentInAppend) {
		io.CopyN(io.Discard, r, r.Size()/2) //nolint:errcheck // it hangs next anyway
		return nil, s.conn.hang()
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if refuse := s.fs.opts.RefuseAppend; s.conn != nil && refuse != nil {
		if err := refuse(body); err != nil {
			return nil, err
		}
	}
	if rewrite := s.fs.opts.RewriteAppend; s.conn != nil && rewrite != nil {
		body = rewrite(body)
	}
	data, err := s.fs.store(mailbox, body, options)
	if err != nil || !s.caps.Has(imap.CapUIDPlus) {
		return nil, err
	}
	return data, nil
}

// Copy copies what RefuseFetch marked with the messages, and leaves out
// COPYUID (RFC 4315 §3) without UIDPLUS, as Append does APPENDUID.
func (s *faultSession) Copy(numSet imap.NumSet, dest string) (*imap.CopyData, error) {
	data, err := s.UserSession.Copy(numSet, dest)
	if err != nil {
		return nil, err
	}
	s.fs.copyMarks(s.selected, dest, data)
	if !s.caps.Has(imap.CapUIDPlus) {
		return nil, nil
	}
	return data, nil
}

// Fetch of message bodies on the faulty port answers the messages
// RefuseFetch lets through and then fails, as Exchange and Cyrus do for a
// message they cannot read; the SilentInFetch-th one answers its first
// message and hangs.
func (s *faultSession) Fetch(w *imapserver.FetchWriter, numSet imap.NumSet, options *imap.FetchOptions) error {
	if s.conn == nil || len(options.BodySection)+len(options.BinarySection) == 0 {
		return s.UserSession.Fetch(w, numSet, options)
	}
	readable, refused := s.fs.split(s.selected, s.uidsIn(numSet))
	if s.fs.fetches.Add(1) == int64(s.fs.opts.SilentInFetch) {
		if len(readable) > 0 {
			s.UserSession.Fetch(w, imap.UIDSetNum(readable[0]), options) //nolint:errcheck // it hangs next anyway
		}
		return s.conn.hang()
	}
	if len(readable) > 0 {
		if err := s.UserSession.Fetch(w, imap.UIDSetNum(readable...), options); err != nil {
			return err
		}
	}
	if len(refused) > 0 {
		return &imap.Error{Type: imap.StatusResponseTypeNo,
			Text: "The requested message could not be converted to an RFC-822 compatible format."}
	}
	return nil
}

// uidsIn is the UIDs of the selected folder's messages in numSet.
func (s *faultSession) uidsIn(numSet imap.NumSet) []imap.UID {
	var criteria imap.SearchCriteria
	switch set := numSet.(type) {
	case imap.SeqSet:
		criteria.SeqNum = []imap.SeqSet{set}
	case imap.UIDSet:
		criteria.UID = []imap.UIDSet{set}
	}
	data, err := s.UserSession.Search(imapserver.NumKindUID, &criteria, &imap.SearchOptions{})
	if err != nil {
		return nil
	}
	uids, _ := data.All.(imap.UIDSet).Nums()
	return uids
}

// List lists the folders in the server's order, with the attributes they
// were given, and answers BAD to options of extensions not announced.
func (s *faultSession) List(w *imapserver.ListWriter, ref string, patterns []string, options *imap.ListOptions) error {
	if err := s.listOptionsError(options); err != nil {
		return err
	}
	if len(patterns) == 0 { // the hierarchy delimiter, RFC 9051 §6.3.9
		return w.WriteList(&imap.ListData{Attrs: []imap.MailboxAttr{imap.MailboxAttrNoSelect}, Delim: '/'})
	}
	for _, data := range s.fs.listed(ref, patterns, options) {
		if err := w.WriteList(&data); err != nil {
			return err
		}
	}
	return nil
}

func (s *faultSession) listOptionsError(o *imap.ListOptions) error {
	extended := o.ReturnSubscribed || o.ReturnChildren || o.SelectRemote || o.SelectRecursiveMatch || o.SelectSpecialUse
	switch {
	case o.ReturnStatus != nil && !s.caps.Has(imap.CapListStatus): // RFC 5819
	case o.ReturnSpecialUse && !s.caps.Has(imap.CapSpecialUse): // RFC 6154 §2
	case extended && !s.caps.Has(imap.CapListExtended): // RFC 5258
	default:
		return nil
	}
	return &imap.Error{Type: imap.StatusResponseTypeBad, Text: "Unknown LIST option"}
}

// Create takes special-use attributes only with CREATE-SPECIAL-USE
// (RFC 6154 §3); the folder is listed last.
func (s *faultSession) Create(name string, options *imap.CreateOptions) error {
	var use []imap.MailboxAttr
	if options != nil {
		use = options.SpecialUse
	}
	if len(use) > 0 && !s.caps.Has(imap.CapCreateSpecialUse) {
		return &imap.Error{Type: imap.StatusResponseTypeBad, Text: "Unknown CREATE parameter"}
	}
	return s.fs.createFolder(name, use)
}

func (s *faultSession) Delete(name string) error {
	return s.fs.deleteFolder(name)
}

func (s *faultSession) Rename(oldName, newName string, options *imap.RenameOptions) error {
	return s.fs.renameFolder(oldName, newName, options)
}

func (s *faultSession) Subscribe(name string) error { return s.fs.subscribe(name, true) }

func (s *faultSession) Unsubscribe(name string) error { return s.fs.subscribe(name, false) }

// faultFolder is a folder as a faultServer lists it, with the messages
// RefuseFetch refuses.
type faultFolder struct {
	name       string
	attrs      []imap.MailboxAttr // without \Subscribed
	subscribed bool
	unreadable map[imap.UID]bool
}

func (fs *faultServer) folder(name string) *faultFolder {
	for _, f := range fs.folders {
		if f.name == name {
			return f
		}
	}
	return &faultFolder{unreadable: map[imap.UID]bool{}} // gone meanwhile
}

func (fs *faultServer) createFolder(name string, attrs []imap.MailboxAttr) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.user.Create(name, nil); err != nil {
		return err
	}
	f := &faultFolder{name: strings.TrimRight(name, "/"), unreadable: map[imap.UID]bool{}}
	for _, attr := range attrs {
		if attr == imap.MailboxAttrSubscribed {
			f.subscribed = true
		} else {
			f.attrs = append(f.attrs, attr)
		}
	}
	fs.folders = append(fs.folders, f)
	return nil
}

func (fs *faultServer) deleteFolder(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.user.Delete(name); err != nil {
		return err
	}
	fs.folders = slices.DeleteFunc(fs.folders, func(f *faultFolder) bool { return f.name == name })
	return nil
}

func (fs *faultServer) renameFolder(oldName, newName string, options *imap.RenameOptions) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.user.Rename(oldName, newName, options); err != nil {
		return err
	}
	fs.folder(oldName).name = strings.TrimRight(newName, "/")
	return nil
}

func (fs *faultServer) subscribe(name string, on bool) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	change := fs.user.Unsubscribe
	if on {
		change = fs.user.Subscribe
	}
	if err := change(name); err != nil {
		return err
	}
	fs.folder(name).subscribed = on
	return nil
}

// listed is what LIST shows: the folders matching a pattern, in the
// server's order. \Subscribed comes with RETURN (SUBSCRIBED) only (RFC
// 5258 §3.2), not with LSUB, which imapserver hands the session as a LIST
// of the subscribed folders.
func (fs *faultServer) listed(ref string, patterns []string, options *imap.ListOptions) []imap.ListData {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []imap.ListData
	for _, f := range fs.folders {
		if !matchesAny(f.name, ref, patterns) || options.SelectSubscribed && !f.subscribed ||
			options.SelectSpecialUse && len(f.attrs) == 0 {
			continue
		}
		data := imap.ListData{Mailbox: f.name, Delim: '/', Attrs: slices.Clone(f.attrs)}
		if options.ReturnSubscribed && f.subscribed {
			data.Attrs = append(data.Attrs, imap.MailboxAttrSubscribed)
		}
		if options.ReturnStatus != nil {
			data.Status, _ = fs.user.Status(f.name, options.ReturnStatus)
		}
		out = append(out, data)
	}
	return out
}

func matchesAny(name, ref string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return imapserver.MatchList(name, '/', ref, p) })
}

// store appends a message and marks it when RefuseFetch refuses it.
func (fs *faultServer) store(folder string, body []byte, options *imap.AppendOptions) (*imap.AppendData, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	data, err := fs.user.Append(folder, bytes.NewReader(body), options)
	if err == nil && fs.opts.RefuseFetch != nil && fs.opts.RefuseFetch(body) {
		fs.folder(folder).unreadable[data.UID] = true
	}
	return data, err
}

// split sorts uids of folder into those RefuseFetch lets through and the
// others.
func (fs *faultServer) split(folder string, uids []imap.UID) (readable, refused []imap.UID) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	marks := fs.folder(folder).unreadable
	for _, uid := range uids {
		if marks[uid] {
			refused = append(refused, uid)
		} else {
			readable = append(readable, uid)
		}
	}
	return readable, refused
}

// copyMarks marks the copies of marked messages: both sets of a COPYUID
// are in the same, ascending, order.
func (fs *faultServer) copyMarks(from, to string, data *imap.CopyData) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	src, _ := data.SourceUIDs.Nums()
	dst, _ := data.DestUIDs.Nums()
	marks, copies := fs.folder(from).unreadable, fs.folder(to).unreadable
	for i, uid := range src {
		if marks[uid] && i < len(dst) {
			copies[dst[i]] = true
		}
	}
}
