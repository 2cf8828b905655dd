package imaptest

import (
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// appendWindow is how many APPENDs Load keeps in flight.
const appendWindow = 32

// Load puts corpus c into the mailbox of login over IMAP: it creates the
// folders that are missing (translated by Layout.MailboxName), subscribes
// those marked, and APPENDs every message with its flags and INTERNALDATE,
// in order, so that UIDs follow the corpus order within each folder.
func (d *Dovecot) Load(t testing.TB, login string, c Corpus) {
	t.Helper()
	load(t, d, login, c)
}

// load is Load on any server.
func load(t testing.TB, s imapServer, login string, c Corpus) {
	t.Helper()
	password, ok := s.password(login)
	if !ok {
		t.Fatalf("imaptest: Load: no user %q", login)
	}
	client := loginAs(t, s, login, password)
	createFolders(t, s, client, c)
	appendMessages(t, s, client, c.Messages)
	if err := client.Logout().Wait(); err != nil {
		t.Fatalf("imaptest: Load: LOGOUT: %v", err)
	}
}

func createFolders(t testing.TB, s imapServer, client *imapclient.Client, c Corpus) {
	t.Helper()
	existing, err := client.List("", "*", nil).Collect()
	if err != nil {
		t.Fatalf("imaptest: Load: LIST: %v", err)
	}
	have := map[string]bool{"INBOX": true}
	for _, l := range existing {
		if !hasAttr(l.Attrs, imap.MailboxAttrNoSelect) {
			have[l.Mailbox] = true
		}
	}
	folders := c.Folders
	for _, m := range c.Messages { // folders only messages name
		folders = append(folders, Folder{Name: m.Folder})
	}
	for _, f := range folders {
		name := s.mailboxName(t, f.Name)
		if !have[name] {
			if err := client.Create(name, nil).Wait(); err != nil {
				t.Fatalf("imaptest: Load: CREATE %q: %v\n%s", name, err, s.LogTail())
			}
			have[name] = true
		}
		if f.Subscribed {
			if err := client.Subscribe(name).Wait(); err != nil {
				t.Fatalf("imaptest: Load: SUBSCRIBE %q: %v", name, err)
			}
		}
	}
}

// mailboxName translates a corpus folder name, failing t for a name the
// layout cannot hold.
func (d *Dovecot) mailboxName(t testing.TB, folder string) string {
	t.Helper()
	name := d.Layout.MailboxName(folder)
	if name == "" || (d.Layout == LayoutDotInbox && strings.Contains(folder, ".")) {
		t.Fatalf("imaptest: folder %q has no name in layout %v", folder, d.Layout)
	}
	return name
}

// appendMessages pipelines the APPENDs (RFC 9051 §6.3.12), waiting for
// the oldest when appendWindow are in flight. Dovecot and mox both run a
// connection's commands in order.
func appendMessages(t testing.TB, s imapServer, client *imapclient.Client, msgs []Message) {
	t.Helper()
	type pending struct {
		cmd *imapclient.AppendCommand
		i   int
	}
	var inFlight []pending
	wait := func(p pending) {
		if _, err := p.cmd.Wait(); err != nil {
			t.Fatalf("imaptest: Load: APPEND message %d to %q: %v\n%s", p.i, msgs[p.i].Folder, err, s.LogTail())
		}
	}
	for i, m := range msgs {
		opts := &imap.AppendOptions{Flags: m.Flags, Time: m.Date}
		cmd := client.Append(s.mailboxName(t, m.Folder), int64(len(m.Body)), opts)
		if _, err := cmd.Write(m.Body); err != nil {
			t.Fatalf("imaptest: Load: APPEND message %d: %v", i, err)
		}
		if err := cmd.Close(); err != nil {
			t.Fatalf("imaptest: Load: APPEND message %d: %v", i, err)
		}
		inFlight = append(inFlight, pending{cmd, i})
		if len(inFlight) == appendWindow {
			wait(inFlight[0])
			inFlight = inFlight[1:]
		}
	}
	for _, p := range inFlight {
		wait(p)
	}
}

func hasAttr(attrs []imap.MailboxAttr, want imap.MailboxAttr) bool {
	for _, a := range attrs {
		if strings.EqualFold(string(a), string(want)) {
			return true
		}
	}
	return false
}
