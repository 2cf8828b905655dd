package transfer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// GmailLabels is how a migration from Gmail treats its labels. Gmail
// shows each label as a folder and "[Gmail]/All Mail" as one more that
// holds every message again (Google's "IMAP Extensions" page: X-GM-EXT-1,
// X-GM-LABELS); copying the folders as they are copies a message once per
// label and once more for All Mail. A source is Gmail when it announces
// X-GM-EXT-1; the policy changes nothing elsewhere.
type GmailLabels string

// The Gmail label policies.
const (
	// GmailFirstLabel copies each message once: a draft to Drafts, an
	// inbox message to INBOX, else to the folder of its first user label
	// (in the order Gmail lists them), else a sent message to Sent, else
	// to the archive. The default.
	GmailFirstLabel GmailLabels = "first-label"
	// GmailKeywords copies each message once, to Drafts, INBOX, Sent or
	// the archive, with its user labels as keywords (and \Important as
	// $Important, RFC 8457).
	GmailKeywords GmailLabels = "keywords"
	// GmailFolders copies a message once per label folder, as any other
	// server's folders; only the mail that no folder shows (archived) is
	// copied from All Mail, to the archive.
	GmailFolders GmailLabels = "folders"
)

// gmailArchive is the destination folder of archived mail where the
// destination has no \Archive folder (RFC 6154).
const gmailArchive = "Archive"

// gmailCapability is announced by Gmail (Google's "IMAP Extensions").
const gmailCapability imap.Cap = "X-GM-EXT-1"

func (o *Options) gmailLabels() GmailLabels { return cmp.Or(o.GmailLabels, GmailFirstLabel) }

// gmailBoxes replaces a Gmail source's folders by what the policy copies:
// views (All Mail, Starred, Important) are never copied as they are; the
// label folders whose messages the policy places become folders read
// from All Mail (mailbox.Reads), each with the messages routed to it
// (labelIndex); All Mail itself stands for the archive. Spam and Trash,
// which All Mail does not hold, stay as they are. Without an All Mail
// the folders stay as they are.
func gmailBoxes(boxes []mailbox, policy GmailLabels) []mailbox {
	i := slices.IndexFunc(boxes, func(b mailbox) bool { return b.View == imap.MailboxAttrAll && b.Selectable })
	if i < 0 {
		return boxes
	}
	allMail := boxes[i]
	out := make([]mailbox, 0, len(boxes))
	for _, b := range boxes {
		switch {
		case b.View != "":
		case policy == GmailFolders || !b.Selectable || b.Role == imap.MailboxAttrJunk || b.Role == imap.MailboxAttrTrash:
			out = append(out, b)
		case routedFolder(b, policy):
			b.Reads, b.Status = allMail.Name, allMail.Status
			out = append(out, b)
		}
		// Left out: a user label under keywords, whose messages go to
		// their home folder with the label as a keyword.
	}
	archive := allMail
	archive.View, archive.Role, archive.Reads, archive.NewName = "", imap.MailboxAttrArchive, allMail.Name, gmailArchive
	return append(out, archive)
}

// counted are the folders that count a label source's messages: a
// folder of its own counts itself; the label folders read from All Mail
// count as All Mail, once, under a policy that copies each message once
// (the archive, under folders, is not told apart before an attempt).
func (l labelSource) counted(folders []mailbox) []mailbox {
	out := make([]mailbox, 0, len(folders))
	allMail := false
	for _, b := range folders {
		switch {
		case b.Reads == "":
			out = append(out, b)
		case !allMail && l.policy != GmailFolders:
			allMail = true
			out = append(out, mailbox{Name: b.Reads, Selectable: true, Status: b.Status}) // All Mail's LIST-STATUS: no STATUS again
		}
	}
	return out
}

// routedFolder reports whether a Gmail label folder gets the messages
// the policy routes to it: INBOX, Sent and Drafts always, a user label's
// folder under first-label only.
func routedFolder(b mailbox, policy GmailLabels) bool {
	return strings.EqualFold(b.Name, "INBOX") || b.Role == imap.MailboxAttrSent || b.Role == imap.MailboxAttrDrafts ||
		policy == GmailFirstLabel
}

// labelIndex is what All Mail's messages are labelled and where the
// policy puts each: read once an attempt, before a folder read from All
// Mail is copied or counted.
type labelIndex struct {
	// All Mail as the index read it: EXAMINE's UIDVALIDITY, UIDNEXT and
	// HIGHESTMODSEQ (with CONDSTORE; a label change raises it).
	uidValidity   uint32
	uidNext       imap.UID
	highestModSeq uint64
	uids          []imap.UID // ascending
	route         []int32    // by uids' index: into folders, or -1 (not copied from All Mail)
	keywords      []int32    // by uids' index: into keywordSets, or -1
	folders       []string
	keywordSets   [][]imap.Flag
	counts        map[string]SourceCount
	// oversize are, by folder, the messages routed to it larger than a
	// plan's size limit (buildLabelIndex's oversizeOver; an attempt has none).
	oversize map[string][]OversizeMessage
}

// routedTo returns the UIDs of All Mail routed to folder, ascending.
func (x *labelIndex) routedTo(folder string) []imap.UID {
	f := int32(slices.Index(x.folders, folder))
	var out []imap.UID
	for i, r := range x.route {
		if r == f && f >= 0 {
			out = append(out, x.uids[i])
		}
	}
	return out
}

// labelKeywords returns the keywords a message's labels become (keywords
// policy), nil for none.
func (x *labelIndex) labelKeywords(uid imap.UID) []imap.Flag {
	i, ok := slices.BinarySearch(x.uids, uid)
	if !ok || x.keywords == nil || x.keywords[i] < 0 {
		return nil
	}
	return x.keywordSets[x.keywords[i]]
}

// labelled is one All Mail message as X-GM-LABELS lists it.
type labelled struct {
	uid    imap.UID
	size   int64
	labels []string
}

// buildLabelIndex reads the labels of every message of All Mail on a
// connection of its own (go-imap v2 has no X-GM-LABELS) and routes each
// as the policy says. A message this migration copied before stays where
// it went, whatever its labels now: a label added or removed since must
// not copy it a second time. A plan lists the messages larger than
// oversizeOver (0: none).
func (r *accountAttempt) buildLabelIndex(ctx context.Context, boxes []mailbox, plans []folderPlan, oversizeOver int64) (*labelIndex, error) {
	allMail, folders := readFromAllMail(plans)
	msgs, status, err := readLabels(ctx, &r.job.Source, allMail, r.job.Tuning)
	if err != nil {
		return nil, err
	}
	x := &labelIndex{uidValidity: status.UIDValidity, uidNext: status.UIDNext, highestModSeq: status.HighestModSeq,
		folders: folders, counts: map[string]SourceCount{}, oversize: map[string][]OversizeMessage{}}
	routed := map[string]bool{} // the folders read from All Mail
	for _, f := range folders {
		routed[f] = true
	}
	policy := r.job.Options.gmailLabels()
	labelFolder := gmailLabelFolders(boxes)
	placed, err := r.placedBefore(ctx, allMail, x.uidValidity)
	if err != nil {
		return nil, err
	}
	keywordSet := map[string]int32{}
	slices.SortFunc(msgs, func(a, b labelled) int { return cmp.Compare(a.uid, b.uid) })
	msgs = slices.CompactFunc(msgs, func(a, b labelled) bool { return a.uid == b.uid }) // a server may answer twice
	for _, m := range msgs {
		folder, ok := placed[m.uid]
		switch {
		case !ok:
			folder = routeMessage(m.labels, labelFolder, routed, allMail, policy)
		case !routed[folder]:
			folder = "" // copied to a folder this plan does not read into (another policy, an exclusion): it is there
		}
		x.uids = append(x.uids, m.uid)
		x.route = append(x.route, int32(slices.Index(x.folders, folder)))
		if folder != "" {
			c := x.counts[folder]
			c.Messages++
			c.Bytes += m.size
			x.counts[folder] = c
			if oversizeOver > 0 && m.size > oversizeOver {
				x.oversize[folder] = append(x.oversize[folder], OversizeMessage{Folder: folder, UID: uint32(m.uid), Size: m.size})
			}
		}
		if policy == GmailKeywords {
			kws := labelKeywordsOf(m.labels)
			key := strings.Join(flagStrings(kws), " ")
			id, ok := keywordSet[key]
			if !ok {
				id = int32(len(x.keywordSets))
				keywordSet[key] = id
				x.keywordSets = append(x.keywordSets, kws)
			}
			x.keywords = append(x.keywords, id)
		}
	}
	return x, nil
}

// readFromAllMail returns All Mail's name and the folders that plans
// read from it, in plan order.
func readFromAllMail(plans []folderPlan) (allMail string, folders []string) {
	for _, p := range plans {
		if p.Source.Reads != "" {
			allMail = p.Source.Reads
			folders = append(folders, p.Source.Name)
		}
	}
	return allMail, folders
}

// placedBefore returns where the folders read from All Mail copied their
// messages in earlier attempts, by All Mail UID, from their maps: every such
// folder's, in this plan or not.
func (r *accountAttempt) placedBefore(ctx context.Context, allMail string, uidValidity uint32) (map[imap.UID]string, error) {
	placed := map[imap.UID]string{}
	for folder, st := range r.sync.states {
		if st.Reads != allMail || st.Servers != r.sync.servers || st.UIDValidity != uidValidity {
			continue
		}
		entries, err := r.sync.mappings(ctx, folder, 0, syncstate.MaxUID)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			placed[imap.UID(e.Source)] = folder
		}
	}
	return placed, nil
}

// gmailLabelFolders maps Gmail's labels to the folders that show them:
// the system labels to INBOX and the folders of their role, a user label
// to the folder of its name.
func gmailLabelFolders(boxes []mailbox) map[string]string {
	m := map[string]string{`\Inbox`: "INBOX"}
	for _, b := range boxes {
		if !b.Selectable || b.View != "" {
			continue
		}
		switch b.Role {
		case imap.MailboxAttrSent:
			m[`\Sent`] = b.Name
		case imap.MailboxAttrDrafts:
			m[`\Draft`] = b.Name
		case imap.MailboxAttrJunk, imap.MailboxAttrTrash:
		default:
			if !strings.EqualFold(b.Name, "INBOX") {
				m[b.Name] = b.Name
			}
		}
	}
	return m
}

// routeMessage returns the folder a message with labels goes to, among
// routed ones; "" when none (it is copied from a folder of its own, or
// every folder of its labels is left out by the options).
func routeMessage(labels []string, labelFolder map[string]string, routed map[string]bool, allMail string, policy GmailLabels) string {
	system := map[string]bool{}
	var user []string
	hasFolder := false
	for _, l := range labels {
		if strings.HasPrefix(l, `\`) {
			system[systemLabel(l)] = true
			if _, ok := labelFolder[systemLabel(l)]; ok {
				hasFolder = true
			}
			continue
		}
		if _, ok := labelFolder[l]; ok {
			hasFolder = true
			user = append(user, l)
		}
	}
	var order []string
	switch policy {
	case GmailFirstLabel:
		order = append(append([]string{`\Draft`, `\Inbox`}, user...), `\Sent`)
	case GmailKeywords:
		order = []string{`\Draft`, `\Inbox`, `\Sent`}
	}
	for _, l := range order {
		if !strings.HasPrefix(l, `\`) || system[l] {
			if f := labelFolder[l]; routed[f] {
				return f
			}
		}
	}
	if policy == GmailKeywords && hasFolder {
		// Labels only, all of them keywords: the message is archived with them.
		hasFolder = system[`\Inbox`] || system[`\Sent`] || system[`\Draft`]
	}
	if !hasFolder && routed[allMail] {
		return allMail
	}
	return ""
}

// systemLabel spells a system label as gmailLabelFolders does (Gmail
// sends "\\Inbox" and also "\\Draft"/"\\Drafts" in places).
func systemLabel(l string) string {
	switch strings.ToLower(l) {
	case `\inbox`:
		return `\Inbox`
	case `\sent`:
		return `\Sent`
	case `\draft`, `\drafts`:
		return `\Draft`
	case `\important`:
		return `\Important`
	case `\starred`:
		return `\Starred`
	}
	return l
}

// labelKeywordsOf returns the keywords of a message's labels under the
// keywords policy: each user label as a keyword (labelKeyword), and
// \Important as $Important (RFC 8457). Starred is the \Flagged flag
// already.
func labelKeywordsOf(labels []string) []imap.Flag {
	var out []imap.Flag
	for _, l := range labels {
		switch {
		case systemLabel(l) == `\Important`:
			out = append(out, "$Important")
		case !strings.HasPrefix(l, `\`):
			out = append(out, labelKeyword(l))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// labelKeyword turns a label into a keyword, an IMAP atom (RFC 9051 §4):
// non-ASCII letters in modified UTF-7 as folder names are, and each
// character an atom cannot hold (space, parentheses, braces, quotes,
// backslash, %, *, ]) as "_".
func labelKeyword(label string) imap.Flag {
	encoded := []byte(imapconn.EncodeMailboxName(label))
	for i, c := range encoded {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`(){%*"\]`, c) >= 0 {
			encoded[i] = '_'
		}
	}
	return imap.Flag(encoded)
}

// readLabels reads the UID, size and labels of every message of All Mail
// (X-GM-LABELS), and the folder's UIDVALIDITY, UIDNEXT and HIGHESTMODSEQ
// as EXAMINE gave them.
func readLabels(ctx context.Context, side *imapconn.Side, allMail string, tuning Tuning) ([]labelled, imap.SelectData, error) {
	var status imap.SelectData
	c, caps, err := imapconn.DialHandWritten(ctx, side, "source", tuning.timeouts())
	if err != nil {
		return nil, status, err
	}
	defer c.Close()
	c.KeepLiterals = true
	var msgs []labelled
	var parseErr error
	c.OnUntagged = func(response string) {
		if code, ok := strings.CutPrefix(response, "OK ["); ok {
			name, value, _ := strings.Cut(code, " ")
			value, _, _ = strings.Cut(value, "]")
			n, _ := strconv.ParseUint(value, 10, 64)
			switch strings.ToUpper(name) {
			case "UIDVALIDITY":
				status.UIDValidity = uint32(n)
			case "UIDNEXT":
				status.UIDNext = imap.UID(n)
			case "HIGHESTMODSEQ":
				status.HighestModSeq = n
			}
			return
		}
		if m, ok, err := parseLabelFetch(response); ok {
			msgs = append(msgs, m)
		} else if err != nil && parseErr == nil {
			parseErr = err
		}
	}
	examine := "EXAMINE " + imapconn.Quote(imapconn.EncodeMailboxName(allMail))
	if caps[imap.CapCondStore] {
		examine += " (CONDSTORE)" // RFC 7162 §3.1.8: HIGHESTMODSEQ, as the engine's own SELECT gets it
	}
	if err := c.Command(examine); err != nil {
		return nil, status, side.Fail("source", imapconn.Classify(err), err)
	}
	if err := c.Command("UID FETCH 1:* (UID RFC822.SIZE X-GM-LABELS)"); err != nil {
		return nil, status, side.Fail("source", imapconn.Classify(err), err)
	}
	if parseErr != nil {
		return nil, status, side.Fail("source", imapconn.KindPermanent, parseErr)
	}
	return msgs, status, nil
}

// parseLabelFetch reads `n FETCH (UID u RFC822.SIZE s X-GM-LABELS (...))`,
// its items in any order; ok is false for any other response.
func parseLabelFetch(response string) (labelled, bool, error) {
	_, rest, _ := strings.Cut(response, " ")
	verb, rest, _ := strings.Cut(rest, " ")
	if !strings.EqualFold(verb, "FETCH") || !strings.HasPrefix(rest, "(") {
		return labelled{}, false, nil
	}
	rest = strings.TrimSuffix(rest[1:], ")")
	var m labelled
	seenLabels := false
	for rest != "" {
		var item string
		item, rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
		switch strings.ToUpper(item) {
		case "UID", "RFC822.SIZE":
			var value string
			value, rest, _ = strings.Cut(rest, " ")
			n, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return m, false, fmt.Errorf("a FETCH response with a malformed %s: %q", item, response)
			}
			if strings.EqualFold(item, "UID") {
				m.uid = imap.UID(n)
			} else {
				m.size = int64(n)
			}
		case "X-GM-LABELS":
			labels, after, err := parseLabelList(rest)
			if err != nil {
				return m, false, fmt.Errorf("%w: %q", err, response)
			}
			m.labels, rest, seenLabels = labels, after, true
		case "":
		default:
			// Another item (FLAGS after a change, say): skip its value.
			_, after, err := skipValue(rest)
			if err != nil {
				return m, false, fmt.Errorf("%w: %q", err, response)
			}
			rest = after
		}
	}
	if m.uid == 0 || !seenLabels {
		return m, false, nil // an unsolicited FETCH of a flag change
	}
	return m, true, nil
}

// parseLabelList reads a parenthesized list of astrings (literals arrive
// as quoted strings, see readLine), decoding modified UTF-7.
func parseLabelList(s string) ([]string, string, error) {
	if !strings.HasPrefix(s, "(") {
		return nil, s, fmt.Errorf("X-GM-LABELS without a list")
	}
	s = s[1:]
	var labels []string
	for {
		s = strings.TrimLeft(s, " ")
		if strings.HasPrefix(s, ")") {
			return labels, s[1:], nil
		}
		if s == "" {
			return nil, s, fmt.Errorf("an unterminated X-GM-LABELS list")
		}
		var label string
		if strings.HasPrefix(s, `"`) {
			var ok bool
			if label, s, ok = imapconn.CutAString(s); !ok {
				return nil, s, fmt.Errorf("a malformed label")
			}
		} else {
			end := strings.IndexAny(s, " )")
			if end < 0 {
				end = len(s)
			}
			label, s = s[:end], s[end:]
		}
		labels = append(labels, imapconn.DecodeMailboxName(label))
	}
}

// skipValue skips one value: an atom, a quoted string or a parenthesized
// list.
func skipValue(s string) (string, string, error) {
	s = strings.TrimLeft(s, " ")
	switch {
	case strings.HasPrefix(s, `"`):
		v, rest, ok := imapconn.CutAString(s)
		if !ok {
			return "", s, fmt.Errorf("a malformed quoted string")
		}
		return v, rest, nil
	case strings.HasPrefix(s, "("):
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return s[:i+1], s[i+1:], nil
				}
			case '"':
				_, rest, ok := imapconn.CutAString(s[i:])
				if !ok {
					return "", s, fmt.Errorf("a malformed quoted string")
				}
				i = len(s) - len(rest) - 1
			}
		}
		return "", s, fmt.Errorf("an unterminated list")
	}
	v, rest, _ := strings.Cut(s, " ")
	return v, rest, nil
}

// routedWindow bounds the UIDs of one routed listing.
const routedWindow = 1000

// runRouted is run for a Gmail label read from All Mail: the windows
// list the messages routed to the folder only, by UID, so that the other
// labels' messages are neither read nor counted as left out. A routed
// message expunged meanwhile is missing from its window, as in run.
func (fs *folderSync) runRouted(ctx context.Context) error {
	uids := fs.labels.routedTo(fs.folder)
	// Scattered UIDs make a long UID FETCH: servers take lines of some
	// kilobytes at least (RFC 7162 §4 suggests 8 KB).
	window := min(fs.r.job.Tuning.Window, routedWindow)
	from := uint32(1)
	for start := 0; ; start += window {
		chunk := uids[start:min(start+window, len(uids))]
		var listing []message
		if len(chunk) > 0 {
			var set imap.UIDSet
			for _, uid := range chunk {
				set.AddNum(uid)
			}
			var err error
			if listing, err = fs.r.source.readMessages(set); err != nil {
				return err
			}
		}
		last := start+window >= len(uids)
		to := syncstate.MaxUID
		if !last {
			to = uint32(chunk[len(chunk)-1])
		}
		if err := fs.window(ctx, from, to, listing); err != nil {
			return err
		}
		if last {
			return nil
		}
		from = to + 1
	}
}

// addLabelKeywords gives each listed message of a Gmail label read from
// All Mail the keywords of its labels (keywords policy), as if they were
// its own: they are copied, and kept up to date, as keywords are.
func (fs *folderSync) addLabelKeywords(listing []message) {
	if fs.labels == nil || fs.labels.keywords == nil {
		return
	}
	for i, msg := range listing {
		kws := fs.labels.labelKeywords(msg.UID)
		if len(kws) == 0 {
			continue
		}
		flags := slices.Clone(msg.Flags)
		for _, kw := range kws {
			if !slices.ContainsFunc(flags, func(f imap.Flag) bool { return canonicalFlag(f) == canonicalFlag(kw) }) {
				flags = append(flags, kw)
			}
		}
		listing[i].Flags = flags
	}
}
