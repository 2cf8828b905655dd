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
}

// roles that a folder is mapped by (RFC 6154). \All and \Flagged are views
// of other folders on servers such as Gmail: copying them would duplicate.
var copiedRoles = []imap.MailboxAttr{
	imap.MailboxAttrSent, imap.MailboxAttrDrafts, imap.MailboxAttrTrash,
	imap.MailboxAttrJunk, imap.MailboxAttrArchive,
}

// roleNames guesses the role of a top-level folder of a server without
// SPECIAL-USE from its usual names (lower case), as mail clients do.
var roleNames = map[string]imap.MailboxAttr{
	"sent": imap.MailboxAttrSent, "sent items": imap.MailboxAttrSent, "sent messages": imap.MailboxAttrSent,
	"sent mail": imap.MailboxAttrSent, "gesendet": imap.MailboxAttrSent, "gesendete objekte": imap.MailboxAttrSent,
	"drafts": imap.MailboxAttrDrafts, "draft": imap.MailboxAttrDrafts, "entwürfe": imap.MailboxAttrDrafts,
	"trash": imap.MailboxAttrTrash, "deleted items": imap.MailboxAttrTrash, "deleted messages": imap.MailboxAttrTrash,
	"papierkorb": imap.MailboxAttrTrash, "gelöschte elemente": imap.MailboxAttrTrash,
	"junk": imap.MailboxAttrJunk, "spam": imap.MailboxAttrJunk, "junk e-mail": imap.MailboxAttrJunk,
	"junk email": imap.MailboxAttrJunk, "bulk mail": imap.MailboxAttrJunk,
	"archive": imap.MailboxAttrArchive, "archives": imap.MailboxAttrArchive, "archiv": imap.MailboxAttrArchive,
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
		for _, role := range copiedRoles {
			if attr == role {
				m.Role = role
			}
		}
	}
	return m
}

// guessRoles gives a role to top-level folders named as roles usually are,
// for servers that announce none. A role already announced is not guessed
// again.
func guessRoles(boxes []mailbox, ns namespace) {
	announced := map[imap.MailboxAttr]bool{}
	for _, b := range boxes {
		announced[b.Role] = true
	}
	for i := range boxes {
		rel, ok := strings.CutPrefix(boxes[i].Name, ns.Prefix)
		if boxes[i].Role != "" || !ok || (ns.Delim != 0 && strings.ContainsRune(rel, ns.Delim)) {
			continue
		}
		if role, ok := roleNames[strings.ToLower(rel)]; ok && !announced[role] {
			boxes[i].Role = role
			announced[role] = true
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

// planFolders decides, for every selectable source folder that the options
// let through, its destination: the explicit map first, then the folder of
// the same role, then the translated name.
func planFolders(src, dst []mailbox, srcNS, dstNS namespace, opts *Options) []folderPlan {
	byRole := map[imap.MailboxAttr]string{}
	existing := map[string]*mailbox{"INBOX": {Name: "INBOX"}}
	for i, b := range dst {
		existing[b.Name] = &dst[i]
		if b.Role != "" && byRole[b.Role] == "" {
			byRole[b.Role] = b.Name
		}
	}
	var plans []folderPlan
	for _, b := range src {
		if !b.Selectable || !opts.wants(b.Name) {
			continue
		}
		name, mapped := opts.FolderMap[b.Name]
		if !mapped && b.Role != "" {
			name = byRole[b.Role]
		}
		if name == "" {
			name = translateName(b.Name, srcNS, dstNS)
		}
		plan := folderPlan{Source: b, Destination: name, Subscribe: b.Subscribed}
		if there := existing[name]; there != nil {
			plan.Subscribe = b.Subscribed && !there.Subscribed
			plan.DestStatus = there.Status
		} else {
			plan.Create = true
			existing[name] = &mailbox{Name: name, Subscribed: b.Subscribed}
			if !mapped && b.Role != "" && byRole[b.Role] == "" {
				plan.CreateRole = b.Role
				byRole[b.Role] = name
			}
		}
		plans = append(plans, plan)
	}
	return plans
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
