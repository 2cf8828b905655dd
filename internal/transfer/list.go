package transfer

import (
	"github.com/emersion/go-imap/v2"
)

// listMailboxes returns every folder of the session's account with its
// role and subscription, and the personal namespace.
func (s *session) listMailboxes() ([]mailbox, namespace, error) {
	caps := s.Caps()
	ns, err := s.personalNamespace(caps)
	if err != nil {
		return nil, ns, err
	}
	opts := &imap.ListOptions{
		ReturnSpecialUse: caps.Has(imap.CapSpecialUse),
		ReturnSubscribed: caps.Has(imap.CapListExtended), // RFC 5258 §3.1
	}
	if caps.Has(imap.CapListStatus) { // RFC 5819: every folder's status in one command
		// HIGHESTMODSEQ (RFC 7162 §3.1.2.1) tells a flag change, where
		// the server has CONDSTORE: without it no folder is ever taken
		// for unchanged (folderFacts.unchanged).
		// SIZE (RFC 8438) gives the source's total for the progress
		// (countSource) in the same command.
		opts.ReturnStatus = &imap.StatusOptions{NumMessages: true, UIDNext: true, UIDValidity: true,
			HighestModSeq: caps.Has(imap.CapCondStore), Size: s.SideName() == "source" && caps.Has(imap.CapStatusSize)}
	}
	listed, err := s.List("", "*", opts).Collect()
	if err != nil {
		return nil, ns, s.Failed(err)
	}
	// Without LIST-EXTENDED the source's subscriptions come from LSUB
	// (accountAttempt.readSubscriptions).
	subscribed := map[string]bool{}
	boxes := make([]mailbox, 0, len(listed))
	for _, data := range listed {
		if ns.Delim == 0 && data.Delim != 0 {
			ns.Delim = data.Delim
		}
		boxes = append(boxes, mailboxFromList(data, subscribed))
	}
	guessRoles(boxes, ns)
	return boxes, ns, nil
}

// personalNamespace asks NAMESPACE (RFC 2342) where it can; without it the
// prefix is empty and the delimiter comes from LIST.
func (s *session) personalNamespace(caps imap.CapSet) (namespace, error) {
	if !caps.Has(imap.CapNamespace) {
		return namespace{}, nil
	}
	data, err := s.Namespace().Wait()
	if err != nil {
		return namespace{}, s.Failed(err)
	}
	if len(data.Personal) == 0 {
		return namespace{}, nil
	}
	return namespace{Prefix: data.Personal[0].Prefix, Delim: data.Personal[0].Delim}, nil
}
