package imaptest

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Read returns the mailbox of login as a corpus, read over IMAP without
// changing it (EXAMINE, BODY.PEEK[]): every selectable folder, named as in
// a corpus (the role for a special-use folder, "/" as delimiter, no
// namespace prefix), with its subscription; and every message in UID
// order with its flags (sorted, without \Recent), INTERNALDATE and body.
// It checks that STATUS and RFC822.SIZE agree with what it fetched.
func (d *Dovecot) Read(t testing.TB, login string) Corpus {
	t.Helper()
	return read(t, d, login)
}

// read is Read on any server.
func read(t testing.TB, s imapServer, login string) Corpus {
	t.Helper()
	password, ok := s.password(login)
	if !ok {
		t.Fatalf("imaptest: Read: no user %q", login)
	}
	client := loginAs(t, s, login, password)
	list, err := client.List("", "*", &imap.ListOptions{ReturnSubscribed: true, ReturnSpecialUse: true}).Collect()
	if err != nil {
		t.Fatalf("imaptest: Read: LIST: %v", err)
	}
	var c Corpus
	for _, l := range list {
		if hasAttr(l.Attrs, imap.MailboxAttrNoSelect) || hasAttr(l.Attrs, imap.MailboxAttrNonExistent) {
			continue
		}
		folder := corpusName(l, s.namespacePrefix())
		c.Folders = append(c.Folders, Folder{Name: folder, Subscribed: hasAttr(l.Attrs, imap.MailboxAttrSubscribed)})
		c.Messages = append(c.Messages, readFolder(t, client, l.Mailbox, folder)...)
	}
	if err := client.Logout().Wait(); err != nil {
		t.Fatalf("imaptest: Read: LOGOUT: %v", err)
	}
	return c
}

func (d *Dovecot) namespacePrefix() string { return d.Layout.Prefix() }

// corpusName translates a LIST entry back to a corpus folder name: the
// role of a special-use folder (RFC 6154), "INBOX" in any case (RFC 9051
// §5.1), else the name without the namespace prefix, with "/" as the
// delimiter.
func corpusName(l *imap.ListData, prefix string) string {
	for _, role := range Roles {
		if hasAttr(l.Attrs, role) {
			return string(role)
		}
	}
	if strings.EqualFold(l.Mailbox, "INBOX") {
		return "INBOX"
	}
	name := strings.TrimPrefix(l.Mailbox, prefix)
	if l.Delim != 0 && l.Delim != '/' {
		name = strings.ReplaceAll(name, string(l.Delim), "/")
	}
	return name
}

func readFolder(t testing.TB, client *imapclient.Client, mailbox, folder string) []Message {
	t.Helper()
	status, err := client.Status(mailbox, &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil {
		t.Fatalf("imaptest: Read: STATUS %q: %v", mailbox, err)
	}
	if *status.NumMessages == 0 {
		return nil
	}
	if _, err := client.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatalf("imaptest: Read: EXAMINE %q: %v", mailbox, err)
	}
	section := &imap.FetchItemBodySection{Peek: true}
	fetch := client.Fetch(imap.UIDSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{
		UID: true, Flags: true, InternalDate: true, RFC822Size: true,
		BodySection: []*imap.FetchItemBodySection{section},
	})
	bufs, err := fetch.Collect()
	if err != nil {
		t.Fatalf("imaptest: Read: UID FETCH in %q: %v", mailbox, err)
	}
	slices.SortFunc(bufs, func(a, b *imapclient.FetchMessageBuffer) int { return int(a.UID) - int(b.UID) })
	if len(bufs) != int(*status.NumMessages) {
		t.Errorf("imaptest: Read: %q: STATUS says %d messages, FETCH gave %d", mailbox, *status.NumMessages, len(bufs))
	}
	var msgs []Message
	for _, b := range bufs {
		body := b.FindBodySection(section)
		if int64(len(body)) != b.RFC822Size {
			t.Errorf("imaptest: Read: %q UID %d: RFC822.SIZE %d, body %d bytes", mailbox, b.UID, b.RFC822Size, len(body))
		}
		msgs = append(msgs, Message{Folder: folder, Flags: normalFlags(b.Flags), Date: b.InternalDate, Body: body})
	}
	return msgs
}

// normalFlags sorts flags and drops \Recent, which is a session's, not a
// message's (RFC 3501 §2.3.2; gone from IMAP4rev2).
func normalFlags(flags []imap.Flag) []imap.Flag {
	out := make([]imap.Flag, 0, len(flags))
	for _, f := range flags {
		if !strings.EqualFold(string(f), `\Recent`) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b imap.Flag) int {
		return strings.Compare(strings.ToLower(string(a)), strings.ToLower(string(b)))
	})
	return out
}

// Diff compares two corpora as mailboxes and describes how got differs
// from want: folders and their subscriptions, and per folder the multiset
// of messages, each known by its flags (case-insensitive, as a set),
// INTERNALDATE (the instant, not the zone) and body. Message order does
// not matter; a duplicate counts twice. It returns nothing when they
// match.
func Diff(want, got Corpus) []string {
	var diffs []string
	wantFolders, gotFolders := folderMap(want), folderMap(got)
	for _, name := range sortedFolderNames(wantFolders, gotFolders) {
		w, inWant := wantFolders[name]
		g, inGot := gotFolders[name]
		switch {
		case !inGot:
			diffs = append(diffs, fmt.Sprintf("folder %q missing", name))
		case !inWant:
			diffs = append(diffs, fmt.Sprintf("folder %q unexpected", name))
		case w != g:
			diffs = append(diffs, fmt.Sprintf("folder %q: subscribed %v, want %v", name, g, w))
		}
	}
	wantMsgs, gotMsgs := messageCounts(want), messageCounts(got)
	for _, key := range sortedKeysOf(wantMsgs, gotMsgs) {
		if w, g := wantMsgs[key], gotMsgs[key]; w != g {
			diffs = append(diffs, fmt.Sprintf("%s: %d copies, want %d", key, g, w))
		}
	}
	return diffs
}

func folderMap(c Corpus) map[string]bool {
	m := map[string]bool{}
	for _, f := range c.Folders {
		m[f.Name] = m[f.Name] || f.Subscribed
	}
	return m
}

// messageCounts counts the messages of c by identity.
func messageCounts(c Corpus) map[string]int {
	m := map[string]int{}
	for _, msg := range c.Messages {
		m[messageKey(msg)]++
	}
	return m
}

func messageKey(m Message) string {
	flags := normalFlags(m.Flags)
	names := make([]string, len(flags))
	for i, f := range flags {
		names[i] = strings.ToLower(string(f))
	}
	return fmt.Sprintf("folder %q message %x (%d bytes, %s, flags %v)",
		m.Folder, sha256.Sum256(m.Body), len(m.Body), m.Date.UTC().Format("2006-01-02 15:04:05Z"), names)
}

func sortedFolderNames(a, b map[string]bool) []string {
	var names []string
	for k := range a {
		names = append(names, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

func sortedKeysOf(a, b map[string]int) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
