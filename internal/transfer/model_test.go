package transfer

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
)

// gmailListing is how Gmail lists an account's folders: INBOX, views,
// label folders, and Trash and Spam, which All Mail does not hold.
func gmailListing() []mailbox {
	allMail := &imap.StatusData{Mailbox: "[Gmail]/All Mail", NumMessages: new(uint32)}
	return []mailbox{
		{Name: "INBOX", Selectable: true},
		{Name: "[Gmail]/All Mail", View: imap.MailboxAttrAll, Selectable: true, Status: allMail},
		{Name: "[Gmail]/Starred", View: imap.MailboxAttrFlagged, Selectable: true},
		{Name: "[Gmail]/Sent Mail", Role: imap.MailboxAttrSent, Selectable: true},
		{Name: "Work", Selectable: true},
		{Name: "[Gmail]/Trash", Role: imap.MailboxAttrTrash, Selectable: true},
		{Name: "[Gmail]/Spam", Role: imap.MailboxAttrJunk, Selectable: true},
	}
}

// describe names each folder, with the folder it is read from and the
// name it asks for.
func describe(boxes []mailbox) string {
	var words []string
	for _, b := range boxes {
		w := b.Name
		if b.Reads != "" {
			w += " < " + b.Reads
		}
		if b.NewName != "" {
			w += " as " + b.NewName
		}
		words = append(words, w)
	}
	return strings.Join(words, ", ")
}

// TestSourceModels: what the core reads from a source, by its model and
// without a server. A folder source is copied and counted as listed; a
// Gmail source's views go, its label folders are read from All Mail as
// the policy routes them, All Mail stands for the archive and counts
// each message once, and its listing never shows an account unchanged.
func TestSourceModels(t *testing.T) {
	t.Parallel()
	plain := []mailbox{{Name: "INBOX", Selectable: true}, {Name: "Sent", Role: imap.MailboxAttrSent, Selectable: true}}
	for _, tc := range []struct {
		name              string
		caps              imap.CapSet
		policy            GmailLabels
		listed            []mailbox
		folders, counted  string
		labels, unchanged bool
	}{
		{"IMAP folders", imap.CapSet{imap.CapIMAP4rev1: {}}, "", plain,
			"INBOX, Sent", "INBOX, Sent", false, true},
		// A server that lists an \All folder but is not Gmail keeps it.
		{"IMAP folders with a view", imap.CapSet{}, "", gmailListing(),
			describe(gmailListing()), describe(gmailListing()), false, true},
		{"Gmail, first label", imap.CapSet{gmailCapability: {}}, GmailFirstLabel, gmailListing(),
			"INBOX < [Gmail]/All Mail, [Gmail]/Sent Mail < [Gmail]/All Mail, Work < [Gmail]/All Mail, [Gmail]/Trash, [Gmail]/Spam, " +
				"[Gmail]/All Mail < [Gmail]/All Mail as Archive",
			"[Gmail]/All Mail, [Gmail]/Trash, [Gmail]/Spam", true, false},
		// Under keywords a user label is a keyword, not a folder.
		{"Gmail, keywords", imap.CapSet{gmailCapability: {}}, GmailKeywords, gmailListing(),
			"INBOX < [Gmail]/All Mail, [Gmail]/Sent Mail < [Gmail]/All Mail, [Gmail]/Trash, [Gmail]/Spam, " +
				"[Gmail]/All Mail < [Gmail]/All Mail as Archive",
			"[Gmail]/All Mail, [Gmail]/Trash, [Gmail]/Spam", true, false},
		// Under folders every label is copied as its own folder: a message
		// counts once per label, and only the archive reads All Mail.
		{"Gmail, folders", imap.CapSet{gmailCapability: {}}, GmailFolders, gmailListing(),
			"INBOX, [Gmail]/Sent Mail, Work, [Gmail]/Trash, [Gmail]/Spam, [Gmail]/All Mail < [Gmail]/All Mail as Archive",
			"INBOX, [Gmail]/Sent Mail, Work, [Gmail]/Trash, [Gmail]/Spam", true, false},
	} {
		model := sourceModelOf(tc.caps, &Options{GmailLabels: tc.policy})
		folders := model.folders(tc.listed)
		if got := describe(folders); got != tc.folders {
			t.Errorf("%s: folders\n%s\nwant\n%s", tc.name, got, tc.folders)
		}
		counted := model.counted(folders)
		if got := describe(counted); got != tc.counted {
			t.Errorf("%s: counted %s, want %s", tc.name, got, tc.counted)
		}
		if i := slices.IndexFunc(counted, func(b mailbox) bool { return b.Name == "[Gmail]/All Mail" }); i >= 0 && counted[i].Status == nil {
			t.Errorf("%s: All Mail is counted without its listed status, which costs a STATUS", tc.name)
		}
		if got := model.labelListing(tc.listed) != nil; got != tc.labels {
			t.Errorf("%s: label listing %v, want %v", tc.name, got, tc.labels)
		}
		if got := model.listingShowsUnchanged(); got != tc.unchanged {
			t.Errorf("%s: listing shows unchanged %v, want %v", tc.name, got, tc.unchanged)
		}
	}
}

// TestDestinationModels: a Gmail destination has an All Mail where a copy
// is found for a second folder, and bins a COPY would move it into; a
// folder destination has neither, whatever it lists.
func TestDestinationModels(t *testing.T) {
	t.Parallel()
	gmail := destinationModelOf(imap.CapSet{gmailCapability: {}})
	if got := gmail.allMail(gmailListing()); got != "[Gmail]/All Mail" {
		t.Errorf("Gmail's All Mail: %q", got)
	}
	if got := slices.Sorted(maps.Keys(gmail.bins(gmailListing()))); !slices.Equal(got, []string{"[Gmail]/Spam", "[Gmail]/Trash"}) {
		t.Errorf("Gmail's bins: %v", got)
	}
	if got := gmail.allMail(gmailListing()[:1]); got != "" {
		t.Errorf("a Gmail listing without All Mail has one: %q", got)
	}
	plain := destinationModelOf(imap.CapSet{imap.CapIMAP4rev1: {}})
	if got, bins := plain.allMail(gmailListing()), plain.bins(gmailListing()); got != "" || len(bins) != 0 {
		t.Errorf("a folder destination: All Mail %q, bins %v", got, bins)
	}
}
