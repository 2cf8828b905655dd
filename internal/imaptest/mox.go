package imaptest

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// MoxOptions configures a mox started by StartMox.
type MoxOptions struct {
	// Users maps login → password, created at start. mox logs in by email
	// address, so a login is one ("alice@example.org"): the address of an
	// account of that name. A password has at least 8 characters.
	Users map[string]string
}

// Mox is a running mox (github.com/mjl-/mox at MoxVersion), an IMAP server
// of a design of its own, built from the Go module proxy: the second
// server the copy engine is proven against. It offers what tests use of a
// Dovecot (Host, Port, Load, Read, Login, LogTail), over plain IMAP only.
//
// Its personal namespace has delimiter "/" and no prefix; INBOX is listed
// as "Inbox". Every account starts with INBOX and the special-use folders
// (RFC 6154) "Sent", "Drafts", "Trash", "Archive" and "Junk", all of them
// subscribed, unlike a new Dovecot mailbox (see MoxStored). Keywords are
// kept in lower case ("Work" comes back as "work"), which Diff, comparing
// flags without regard to case, accepts.
//
// It is stopped, and its directory removed, when the test that started it
// ends.
type Mox struct {
	Host string // "127.0.0.1"
	Port int    // plain IMAP; there is no TLS
	Dir  string // everything of this instance lives here

	bin       string
	proc      *process
	passwords map[string]string // login → password; not changed after start
}

// moxRoleMailboxes names the folders mox creates for the special-use roles
// (its default InitialMailboxes).
var moxRoleMailboxes = map[imap.MailboxAttr]string{
	imap.MailboxAttrSent: "Sent", imap.MailboxAttrDrafts: "Drafts",
	imap.MailboxAttrTrash: "Trash", imap.MailboxAttrJunk: "Junk",
	imap.MailboxAttrArchive: "Archive",
}

// StartMox starts `mox localserve` on a free loopback port in a new
// directory, with opts.Users, and waits until it serves. It fails t when
// mox does not start, with the tail of its log; see moxBinary for a mox
// that cannot be built.
//
// localserve rather than serve: serve must be started as root, binds its
// ports and then runs as a dedicated system user, while localserve runs
// as whoever starts it, root or not, on the ports of the configuration
// written here. (Its banner speaks of fixed ports and a default account:
// those are of the configuration it writes when it finds none.)
func StartMox(t testing.TB, opts MoxOptions) *Mox {
	t.Helper()
	bin := moxBinary(t)
	if err := checkMoxUsers(opts.Users); err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	dir, err := os.MkdirTemp("", "imaptest-mox-")
	if err != nil {
		t.Fatalf("imaptest: %v", err)
	}
	m := &Mox{Host: "127.0.0.1", Dir: dir, bin: bin, passwords: maps.Clone(opts.Users)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("imaptest: log of the mox on %s:\n%s", m.Addr(), m.LogTail())
		}
		m.cleanup()
	})
	logins := sortedKeys(opts.Users)
	if err := m.start(logins); err != nil {
		t.Fatalf("imaptest: %v\n%s", err, m.LogTail())
	}
	for _, login := range logins {
		if err := m.setMoxPassword(login, opts.Users[login]); err != nil {
			t.Fatalf("imaptest: %v\n%s", err, m.LogTail())
		}
	}
	return m
}

// Addr is the host:port of plain IMAP.
func (m *Mox) Addr() string { return net.JoinHostPort(m.Host, strconv.Itoa(m.Port)) }

// LogTail returns the last lines of mox's log, for failure messages.
func (m *Mox) LogTail() string {
	if info, err := os.Stat(m.logPath()); err != nil || info.Size() == 0 {
		return "(mox logged nothing)"
	}
	return logTail(m.Dir, 40)
}

// Load puts corpus c into the mailbox of login, as Dovecot.Load does; a
// special-use role names mox's folder of that role.
func (m *Mox) Load(t testing.TB, login string, c Corpus) {
	t.Helper()
	load(t, m, login, c)
}

// Read returns the mailbox of login as a corpus, as Dovecot.Read does.
func (m *Mox) Read(t testing.TB, login string) Corpus {
	t.Helper()
	return read(t, m, login)
}

// Dial returns a client connected over plain TCP that has read the
// greeting and is not logged in. It is closed when t ends.
func (m *Mox) Dial(t testing.TB) *imapclient.Client {
	t.Helper()
	return dial(t, m)
}

// Login returns a client logged in as login, closed when t ends.
func (m *Mox) Login(t testing.TB, login, password string) *imapclient.Client {
	t.Helper()
	return loginAs(t, m, login, password)
}

func (m *Mox) password(login string) (string, bool) {
	pw, ok := m.passwords[login]
	return pw, ok
}

// mailboxName translates a corpus folder name: a corpus names folders as
// mox does ("/", no prefix), but for the special-use roles.
func (m *Mox) mailboxName(t testing.TB, folder string) string {
	t.Helper()
	if !strings.HasPrefix(folder, `\`) {
		return folder
	}
	name, ok := moxRoleMailboxes[imap.MailboxAttr(folder)]
	if !ok {
		t.Fatalf("imaptest: mox has no folder of role %q", folder)
	}
	return name
}

func (m *Mox) namespacePrefix() string { return "" }

func (m *Mox) clientOptions() *imapclient.Options {
	return &imapclient.Options{Dialer: &net.Dialer{Timeout: dialTimeout}}
}

// logPath is where mox's stdout and stderr go, by the name logTail reads.
func (m *Mox) logPath() string { return filepath.Join(m.Dir, "stderr.log") }

func (m *Mox) cleanup() {
	if m.proc != nil {
		m.proc.kill()
	}
	removeDir(m.Dir)
}

// start configures and launches mox on a free port, and waits until it
// serves. A port found free may be taken by another process before mox
// binds it: then it tries other ports.
func (m *Mox) start(logins []string) error {
	for attempt := 1; ; attempt++ {
		err := m.startOnce(logins)
		if !errors.Is(err, errPortTaken) || attempt == 5 {
			return err
		}
	}
}

func (m *Mox) startOnce(logins []string) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	m.Port = ports[0]
	if err := writeMoxConfig(m.Dir, m.Port, logins); err != nil {
		return err
	}
	// Nothing of an earlier attempt, such as its control socket.
	if err := resetDir(filepath.Join(m.Dir, "data")); err != nil {
		return err
	}
	p, err := launchMox(m.bin, m.Dir, m.logPath())
	if err != nil {
		return err
	}
	if err := m.waitServing(p); err != nil {
		p.kill()
		if strings.Contains(m.LogTail(), "address already in use") {
			os.Remove(m.logPath())
			return errPortTaken
		}
		return fmt.Errorf("mox on %s: %w", m.Addr(), err)
	}
	m.proc = p
	return nil
}

// MoxStored returns corpus c as a new mox account holds it once c is put
// into it, by Load or by a migration. mox subscribes every folder it
// creates: INBOX and the special-use folders with the account, any other
// on CREATE (RFC 9051 §6.3.4 leaves that to the server); nothing
// unsubscribes them. And it flags $Junk, not $NotJunk, every message put
// into its \Junk folder, for its junk filter's training.
func MoxStored(c Corpus) Corpus {
	out := Corpus{Folders: slices.Clone(c.Folders)}
	for _, name := range moxInitialFolders() {
		if !slices.ContainsFunc(out.Folders, func(f Folder) bool { return f.Name == name }) {
			out.Folders = append(out.Folders, Folder{Name: name})
		}
	}
	for i := range out.Folders {
		out.Folders[i].Subscribed = true
	}
	for _, m := range c.Messages {
		if m.Folder == string(imap.MailboxAttrJunk) {
			m.Flags = withJunk(m.Flags)
		}
		out.Messages = append(out.Messages, m)
	}
	return out
}

// withJunk returns flags with $Junk and without $NotJunk, whatever their
// case.
func withJunk(flags []imap.Flag) []imap.Flag {
	out := []imap.Flag{imap.FlagJunk}
	for _, f := range flags {
		if !strings.EqualFold(string(f), string(imap.FlagJunk)) && !strings.EqualFold(string(f), string(imap.FlagNotJunk)) {
			out = append(out, f)
		}
	}
	return out
}

// moxInitialFolders are the corpus names of the folders of a new mox
// account.
func moxInitialFolders() []string {
	names := []string{"INBOX"}
	for _, role := range Roles {
		names = append(names, string(role))
	}
	return names
}
