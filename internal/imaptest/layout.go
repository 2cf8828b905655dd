package imaptest

import (
	"strings"

	"github.com/emersion/go-imap/v2"
)

// Layout of a server's personal namespace.
type Layout int

const (
	// LayoutSlash has hierarchy delimiter "/" and no prefix, with
	// special-use folders named like Outlook's: "Sent Items" (\Sent),
	// "Drafts" (\Drafts), "Deleted Items" (\Trash), "Junk E-mail" (\Junk),
	// "Archive" (\Archive). Mail is stored in maildir with LAYOUT=fs, so
	// folder names may contain ".".
	LayoutSlash Layout = iota
	// LayoutDotInbox has delimiter "." and prefix "INBOX.", like Courier
	// and many hosting providers: special-use folders are "INBOX.Sent",
	// "INBOX.Drafts", "INBOX.Trash", "INBOX.Junk", "INBOX.Archive". Mail is
	// stored in Maildir++, so folder names cannot contain ".".
	LayoutDotInbox
)

// Roles lists the special-use roles (RFC 6154) every layout has a folder
// for, in a fixed order.
var Roles = []imap.MailboxAttr{
	imap.MailboxAttrSent, imap.MailboxAttrDrafts, imap.MailboxAttrTrash,
	imap.MailboxAttrJunk, imap.MailboxAttrArchive,
}

var roleNames = map[Layout]map[imap.MailboxAttr]string{
	LayoutSlash: {
		imap.MailboxAttrSent: "Sent Items", imap.MailboxAttrDrafts: "Drafts",
		imap.MailboxAttrTrash: "Deleted Items", imap.MailboxAttrJunk: "Junk E-mail",
		imap.MailboxAttrArchive: "Archive",
	},
	LayoutDotInbox: {
		imap.MailboxAttrSent: "Sent", imap.MailboxAttrDrafts: "Drafts",
		imap.MailboxAttrTrash: "Trash", imap.MailboxAttrJunk: "Junk",
		imap.MailboxAttrArchive: "Archive",
	},
}

func (l Layout) String() string {
	switch l {
	case LayoutSlash:
		return "slash"
	case LayoutDotInbox:
		return "dot-inbox"
	}
	return "Layout(?)"
}

// Delimiter is the hierarchy delimiter of the personal namespace.
func (l Layout) Delimiter() rune {
	if l == LayoutDotInbox {
		return '.'
	}
	return '/'
}

// Prefix is the personal namespace's prefix (RFC 2342).
func (l Layout) Prefix() string {
	if l == LayoutDotInbox {
		return "INBOX."
	}
	return ""
}

// RoleMailbox returns the name of the layout's folder with the special-use
// role, such as "Sent Items" or "INBOX.Sent" for \Sent, or "" for a role
// it has no folder for.
func (l Layout) RoleMailbox(role imap.MailboxAttr) string {
	name, ok := roleNames[l][role]
	if !ok {
		return ""
	}
	return l.Prefix() + name
}

// MailboxName translates a corpus folder name (see Folder) to the
// mailbox name on a server of this layout: "INBOX" stays, a role such as
// "\\Sent" becomes the layout's folder of that role, and for LayoutDotInbox
// "A/B" becomes "INBOX.A.B".
func (l Layout) MailboxName(folder string) string {
	if strings.EqualFold(folder, "INBOX") {
		return "INBOX"
	}
	if strings.HasPrefix(folder, `\`) {
		return l.RoleMailbox(imap.MailboxAttr(folder))
	}
	if l == LayoutDotInbox {
		return l.Prefix() + strings.ReplaceAll(folder, "/", ".")
	}
	return folder
}

// mailLocation is Dovecot's mail_location for the layout. Maildir++
// (the default) stores "INBOX.A.B" as ".A.B"; LAYOUT=fs stores "A/B" as
// the directory A/B, so that names may contain dots.
func (l Layout) mailLocation() string {
	if l == LayoutDotInbox {
		return "maildir:~/Maildir"
	}
	return "maildir:~/Maildir:LAYOUT=fs"
}

// sdboxLocation is mail_location for Options.Sdbox: a file per message
// and an index, in directories named as the folders.
const sdboxLocation = "sdbox:~/sdbox"

type specialUse struct {
	Name string // relative to the namespace prefix
	Role imap.MailboxAttr
}

func (l Layout) specialUse() []specialUse {
	var list []specialUse
	for _, role := range Roles {
		list = append(list, specialUse{Name: roleNames[l][role], Role: role})
	}
	return list
}
