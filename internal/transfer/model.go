package transfer

import (
	"context"
	"slices"

	"github.com/emersion/go-imap/v2"
)

// The provider layer as the core sees it: how a server's folders hold
// messages. The core asks these two models, chosen once from a server's
// capabilities, and never tests for a provider itself; what a model does
// for Gmail lives in gmail.go and gmailin.go.

// sourceModel is how a source's folders hold its messages: each message
// in one folder, as IMAP has it (folderSource), or Gmail's labels over one
// All Mail (labelSource).
type sourceModel interface {
	// folders are the folders an attempt copies from, given the source's
	// listing.
	folders(listed []mailbox) []mailbox
	// labelListing is the listing a label index is built from (the
	// folders as the server lists them); nil when messages are in
	// folders.
	labelListing(listed []mailbox) []mailbox
	// counted are the folders whose STATUS counts the messages of
	// folders, the ones an attempt copies from: each message once.
	counted(folders []mailbox) []mailbox
	// listingShowsUnchanged reports whether the source's LIST-STATUS
	// alone can show an account unchanged (source-only deltas): not when
	// folders are read from another one.
	listingShowsUnchanged() bool
}

// destinationModel is how a destination files the copies: in folders
// alone (folderDestination), or by labels over an All Mail, where a
// message given a second folder is found again (labelDestination).
type destinationModel interface {
	// allMail is the folder that holds every message, where a copy made
	// into one folder is found for another; "" when there is none.
	allMail(listed []mailbox) string
	// bins are the folders a COPY into moves a message rather than
	// labels it (Trash, Spam): never given a found copy.
	bins(listed []mailbox) map[string]bool
}

// sourceModelOf is the model of a source with caps, under opts.
func sourceModelOf(caps imap.CapSet, opts *Options) sourceModel {
	if caps.Has(gmailCapability) {
		return labelSource{policy: opts.gmailLabels()}
	}
	return folderSource{}
}

// destinationModelOf is the model of a destination with caps.
func destinationModelOf(caps imap.CapSet) destinationModel {
	if caps.Has(gmailCapability) {
		return labelDestination{}
	}
	return folderDestination{}
}

// folderSource: every message in one folder.
type folderSource struct{}

func (folderSource) folders(listed []mailbox) []mailbox  { return listed }
func (folderSource) labelListing([]mailbox) []mailbox    { return nil }
func (folderSource) counted(folders []mailbox) []mailbox { return folders }
func (folderSource) listingShowsUnchanged() bool         { return true }

// labelSource: Gmail's labels, read from All Mail as the policy routes
// them (gmail.go); its listing cannot tell an unchanged account, since a
// label's messages are counted in All Mail.
type labelSource struct{ policy GmailLabels }

func (l labelSource) folders(listed []mailbox) []mailbox    { return gmailBoxes(listed, l.policy) }
func (labelSource) labelListing(listed []mailbox) []mailbox { return listed }
func (labelSource) listingShowsUnchanged() bool             { return false }

// folderDestination: folders alone.
type folderDestination struct{}

func (folderDestination) allMail([]mailbox) string       { return "" }
func (folderDestination) bins([]mailbox) map[string]bool { return nil }

// labelDestination: Gmail, whose All Mail holds every message, and whose
// Trash and Spam do not (gmailin.go).
type labelDestination struct{}

func (labelDestination) allMail(listed []mailbox) string {
	if i := slices.IndexFunc(listed, func(b mailbox) bool { return b.View == imap.MailboxAttrAll }); i >= 0 {
		return listed[i].Name
	}
	return ""
}

func (labelDestination) bins(listed []mailbox) map[string]bool {
	bins := map[string]bool{}
	for _, b := range listed {
		if b.Role == imap.MailboxAttrTrash || b.Role == imap.MailboxAttrJunk {
			bins[b.Name] = true
		}
	}
	return bins
}

// sourceLabels is what an attempt keeps of a source whose messages are
// labels over All Mail (labelSource): its folders as listed (anew each
// try), and its label index, what each message is labelled and where it
// goes, read when a folder read from All Mail first needs it (gmail.go)
// and again only when it no longer fits (accountAttempt.labelIndex).
type sourceLabels struct {
	listing []mailbox
	index   *labelIndex
}

// labelIndex returns the attempt's label index, reading it the first time,
// or again when the plan reads other folders from All Mail, or when All
// Mail as a folder has just opened it (selected) is not as it was read:
// a message arrived or changed labels meanwhile. The folder's state
// records what it opened, so the index must cover exactly that, or a
// message the index missed would pass for done. An attempt after a
// throttle or a reconnect keeps an index still good: on Gmail, reading it
// again spends the bandwidth that ran out.
func (r *accountAttempt) labelIndex(ctx context.Context, selected *imap.SelectData) (*labelIndex, error) {
	_, folders := readFromAllMail(r.plans)
	if x := r.sourceLabels.index; x != nil && slices.Equal(x.folders, folders) && (selected == nil ||
		x.uidValidity == selected.UIDValidity && x.uidNext == selected.UIDNext && x.highestModSeq == selected.HighestModSeq) {
		return x, nil
	}
	x, err := r.buildLabelIndex(ctx, r.sourceLabels.listing, r.plans, 0)
	if err != nil {
		return nil, err
	}
	r.sourceLabels.index = x
	return x, nil
}

// destinationLabels is what an attempt keeps of a destination that files
// by labels over an All Mail (labelDestination): that folder, where twins
// finds the messages a folder may get by a label (gmailin.go), "" where
// there is none; and its bins, the folders a COPY into moves the message,
// labels and all (Gmail's Trash and Spam), never given a twin.
type destinationLabels struct {
	allMail string
	bins    map[string]bool
	twins   *allMailTwins
}
