package transfer

import (
	"strings"

	"github.com/emersion/go-imap/v2"
)

// mailbox is a folder as one server lists it.
type mailbox struct {
	Name       string // decoded from modified UTF-7 by the client
	Role       imap.MailboxAttr
	Selectable bool
	Subscribed bool
	Status     *imap.StatusData // from LIST-STATUS, where the server has it
	// View is \All, \Flagged or \Important (RFC 6154, RFC 8457): a folder
	// that shows the messages of others, as Gmail's All Mail, Starred and
	// Important do.
	View imap.MailboxAttr
	// Reads, when set, is the folder that is opened instead of Name: a
	// Gmail label whose messages come from All Mail (gmailBoxes). Name
	// stays the key of the folder's sync state.
	Reads string
	// NewName, when set, is the destination name the folder takes where
	// no earlier attempt, folder map or role decides (Gmail's archive).
	NewName string
}

// reads is the folder that is opened to read the messages.
func (m mailbox) reads() string {
	if m.Reads != "" {
		return m.Reads
	}
	return m.Name
}

// namespace is a server's personal namespace (RFC 2342).
type namespace struct {
	Prefix string
	Delim  rune
}

// folderPlan says where one source folder goes.
type folderPlan struct {
	Source      mailbox
	Destination string
	Create      bool // the destination lacks it
	// CreateRole is the source folder's role where the destination has no
	// folder of that role: the new folder gets it (CREATE-SPECIAL-USE).
	CreateRole imap.MailboxAttr
	Subscribe  bool             // the source folder is subscribed, the destination's is not
	DestStatus *imap.StatusData // of an existing destination folder, from LIST-STATUS
	// Wanted is the destination name the folder would have had, and Moved
	// why it has another: a name the destination refuses, or one another
	// source folder took (the plan's warnings; empty when it kept it).
	Wanted string
	Moved  PlanProblemKind
}

// roles that a folder is mapped by (RFC 6154). \All and \Flagged are views
// of other folders on servers such as Gmail: copying them would duplicate.
var copiedRoles = []imap.MailboxAttr{
	imap.MailboxAttrSent, imap.MailboxAttrDrafts, imap.MailboxAttrTrash,
	imap.MailboxAttrJunk, imap.MailboxAttrArchive,
}

// roleNames guesses the role of a top-level folder of a server without
// SPECIAL-USE from its usual names (lower case), as mail clients do, with
// a rank: the role's own English name first, other English names next,
// translations last.
var roleNames = map[string]struct {
	role imap.MailboxAttr
	rank int
}{
	"sent": {imap.MailboxAttrSent, 0}, "sent items": {imap.MailboxAttrSent, 1}, "sent messages": {imap.MailboxAttrSent, 1},
	"sent mail": {imap.MailboxAttrSent, 1}, "gesendet": {imap.MailboxAttrSent, 2}, "gesendete objekte": {imap.MailboxAttrSent, 2},
	"drafts": {imap.MailboxAttrDrafts, 0}, "draft": {imap.MailboxAttrDrafts, 1}, "entwürfe": {imap.MailboxAttrDrafts, 2},
	"trash": {imap.MailboxAttrTrash, 0}, "deleted items": {imap.MailboxAttrTrash, 1}, "deleted messages": {imap.MailboxAttrTrash, 1},
	"papierkorb": {imap.MailboxAttrTrash, 2}, "gelöschte elemente": {imap.MailboxAttrTrash, 2},
	"junk": {imap.MailboxAttrJunk, 0}, "spam": {imap.MailboxAttrJunk, 1}, "junk e-mail": {imap.MailboxAttrJunk, 1},
	"junk email": {imap.MailboxAttrJunk, 1}, "bulk mail": {imap.MailboxAttrJunk, 1},
	"archive": {imap.MailboxAttrArchive, 0}, "archives": {imap.MailboxAttrArchive, 1}, "archiv": {imap.MailboxAttrArchive, 2},
}

// mailboxFromList reads a LIST response.
func mailboxFromList(data *imap.ListData, subscribedOnly map[string]bool) mailbox {
	m := mailbox{Name: data.Mailbox, Selectable: true, Subscribed: subscribedOnly[data.Mailbox], Status: data.Status}
	for _, attr := range data.Attrs {
		switch attr {
		case imap.MailboxAttrNoSelect, imap.MailboxAttrNonExistent:
			m.Selectable = false
		case imap.MailboxAttrSubscribed:
			m.Subscribed = true
		}
		switch attr {
		case imap.MailboxAttrAll, imap.MailboxAttrFlagged, imap.MailboxAttrImportant:
			m.View = attr
		}
		for _, role := range copiedRoles {
			if attr == role {
				m.Role = role
			}
		}
	}
	return m
}

// guessRoles gives a role to top-level folders named as roles usually are,
// for servers that announce none. A role already announced is not
// guessed, and a role is given only where one folder is the best
// candidate (Drafts beats Entwürfe; Sent Items and Sent Messages tie, and neither
// gets the role): a wrong guess would merge two folders.
func guessRoles(boxes []mailbox, ns namespace) {
	type candidates struct {
		rank    int
		indexes []int
	}
	announced := map[imap.MailboxAttr]bool{}
	for _, b := range boxes {
		announced[b.Role] = true
	}
	best := map[imap.MailboxAttr]*candidates{}
	for i, b := range boxes {
		rel, ok := strings.CutPrefix(b.Name, ns.Prefix)
		if b.Role != "" || !ok || (ns.Delim != 0 && strings.ContainsRune(rel, ns.Delim)) {
			continue
		}
		guess, ok := roleNames[strings.ToLower(rel)]
		if !ok || announced[guess.role] {
			continue
		}
		switch c := best[guess.role]; {
		case c == nil || guess.rank < c.rank:
			best[guess.role] = &candidates{rank: guess.rank, indexes: []int{i}}
		case guess.rank == c.rank:
			c.indexes = append(c.indexes, i)
		}
	}
	for role, c := range best {
		if len(c.indexes) == 1 {
			boxes[c.indexes[0]].Role = role
		}
	}
}

// translateName maps a source folder name to the destination's hierarchy:
// the personal prefix and the delimiter are swapped, and a destination
// delimiter inside a name part becomes "_" (it would split the part).
// Children of INBOX stay children of INBOX.
func translateName(name string, src, dst namespace) string {
	if strings.EqualFold(name, "INBOX") {
		return "INBOX"
	}
	rel, _ := strings.CutPrefix(name, src.Prefix)
	parts := []string{rel}
	if src.Delim != 0 {
		parts = strings.Split(rel, string(src.Delim))
	}
	for i, p := range parts {
		if dst.Delim != 0 && dst.Delim != src.Delim {
			parts[i] = strings.ReplaceAll(p, string(dst.Delim), "_")
		}
	}
	delim := string(dst.Delim)
	if len(parts) > 1 && strings.EqualFold(parts[0], "INBOX") {
		child := strings.Join(parts[1:], delim)
		if strings.EqualFold(dst.Prefix, "INBOX"+delim) {
			return dst.Prefix + child
		}
		return "INBOX" + delim + child
	}
	return dst.Prefix + strings.Join(parts, delim)
}

// personal puts a destination name from the folder map into the personal
// namespace unless it is there already: "Sent" on a server whose folders
// live under "INBOX." is "INBOX.Sent", as the user meant; INBOX stays.
func (ns namespace) personal(name string) string {
	if ns.Prefix == "" || strings.EqualFold(name, "INBOX") ||
		(len(name) >= len(ns.Prefix) && strings.EqualFold(name[:len(ns.Prefix)], ns.Prefix)) {
		return name
	}
	return ns.Prefix + name
}

// wants reports whether the options let source folder name through.
func (o *Options) wants(name string) bool {
	for _, re := range o.ExcludeFolders {
		if re.MatchString(name) {
			return false
		}
	}
	if len(o.IncludeFolders) == 0 {
		return true
	}
	for _, re := range o.IncludeFolders {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}
