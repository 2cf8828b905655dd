package transfer

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// message is what the engine knows of a message before copying it.
type message struct {
	UID      imap.UID
	Flags    []imap.Flag
	Date     time.Time
	Size     int64
	Identity string
	// Likeness is what a copy whose header a destination re-encoded
	// still shares with it (likeness); read with Identity.
	Likeness string
	// partial: listed by UID only (listChanged), with Flags where
	// changed is set; folderSync.complete fills in the rest.
	partial, changed bool
}

// listMessages reads the UID, flags, INTERNALDATE and size of the
// messages with sequence numbers first to last of the selected folder,
// in UID order (RFC 9051 §6.4.5).
func (s *session) listMessages(first, last uint32) ([]message, error) {
	var seqs imap.SeqSet
	seqs.AddRange(first, last)
	return s.collectMessages(s.Fetch(seqs, listItems), false)
}

// listItems are what a listing reads of each message.
var listItems = &imap.FetchOptions{UID: true, Flags: true, InternalDate: true, RFC822Size: true}

// listChanged lists the UIDs of the messages with sequence numbers first
// to last of the selected folder, with the flags of those whose flags
// changed since modseq (RFC 7162 §3.1.4, CHANGEDSINCE): for a folder whose
// flags were all carried as of modseq, a re-run reads little more than
// its UIDs.
func (s *session) listChanged(first, last uint32, modseq uint64) ([]message, error) {
	var seqs imap.SeqSet
	seqs.AddRange(first, last)
	found, err := s.UIDSearch(&imap.SearchCriteria{SeqNum: []imap.SeqSet{seqs}}, nil).Wait()
	if err != nil {
		return nil, s.Failed(err)
	}
	changed, err := s.collectMessages(s.Fetch(seqs, &imap.FetchOptions{UID: true, Flags: true, ChangedSince: modseq}), false)
	if err != nil {
		return nil, err
	}
	flagsOf := make(map[imap.UID][]imap.Flag, len(changed))
	for _, msg := range changed {
		flagsOf[msg.UID] = msg.Flags
	}
	uids := found.AllUIDs()
	slices.Sort(uids)
	out := make([]message, len(uids))
	for i, uid := range uids {
		flags, ok := flagsOf[uid]
		out[i] = message{UID: uid, Flags: flags, partial: true, changed: ok}
	}
	return out, nil
}

// readMessages reads the flags, INTERNALDATE and size of the messages uids
// of the selected folder, in UID order; one expunged meanwhile is missing.
func (s *session) readMessages(uids imap.UIDSet) ([]message, error) {
	return s.collectMessages(s.Fetch(uids, listItems), false)
}

// present returns which of uids the selected folder holds (RFC 9051
// §6.4.4, UID SEARCH).
func (s *session) present(uids imap.UIDSet) ([]imap.UID, error) {
	data, err := s.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{uids}}, nil).Wait()
	if err != nil {
		return nil, s.Failed(err)
	}
	return data.AllUIDs(), nil
}

// identities reads the flags, size and identity of the messages uids of
// the selected folder. The source is only read: BODY.PEEK sets no \Seen.
// The header fields make the server read every message's header (a file
// each in a maildir): only worth it to compare.
func (s *session) identities(uids imap.UIDSet) ([]message, error) {
	return s.collectMessages(s.Fetch(uids, &imap.FetchOptions{UID: true, Flags: true, RFC822Size: true,
		BodySection: []*imap.FetchItemBodySection{identitySection}}), true)
}

// readableIdentities is identities for a server that may refuse to read
// some messages: a FETCH it ends with NO keeps what it delivered, and
// reports the refusal (partial), so that the caller does not take the
// messages it lacks for expunged.
func (s *session) readableIdentities(uids imap.UIDSet) (msgs []message, partial bool, err error) {
	msgs, err = s.identities(uids)
	var refusal *fetchRefusal
	if errors.As(err, &refusal) {
		return refusal.delivered, true, nil
	}
	return msgs, false, err
}

// fetchRefusal is a FETCH the server ended with NO (RFC 9051 §6.4.5: it
// could not return some of the data), with what it delivered before.
type fetchRefusal struct {
	error
	delivered []message
}

func (e *fetchRefusal) Unwrap() error { return e.error }

func (s *session) collectMessages(cmd *imapclient.FetchCommand, withIdentity bool) ([]message, error) {
	var messages []message
	for {
		data := cmd.Next()
		if data == nil {
			break
		}
		buf, err := data.Collect()
		if err != nil {
			s.Abandon() // see streamBodies: a failed FETCH is not touched again
			return nil, s.Failed(err)
		}
		if buf.UID == 0 {
			continue // an unsolicited FETCH of a flag change, say
		}
		msg := message{UID: buf.UID, Flags: buf.Flags, Date: buf.InternalDate, Size: buf.RFC822Size}
		if withIdentity {
			header := buf.FindBodySection(identitySection)
			msg.Identity, msg.Likeness = identity(header, buf.RFC822Size), likeness(header)
		}
		messages = append(messages, msg)
	}
	slices.SortFunc(messages, func(a, b message) int { return cmp.Compare(a.UID, b.UID) })
	if err := cmd.Close(); err != nil {
		kind := imapconn.Classify(err)
		if kind == imapconn.KindPermanent {
			return nil, &fetchRefusal{error: s.Fail(kind, err), delivered: messages}
		}
		return nil, s.Fail(kind, err)
	}
	return messages, nil
}

// fetchedBody is one message body arriving from the source.
type fetchedBody struct {
	UID  imap.UID
	Body imap.LiteralReader
}

// nextBody reads the next message of a body FETCH: its UID and a reader of
// its body, which must be read to its end before the next call. A server
// that sends the body before the UID gets the body spooled to a temporary
// file first, so memory stays bounded either way.
func nextBody(cmd *imapclient.FetchCommand) (*fetchedBody, func(), error) {
	data := cmd.Next()
	if data == nil {
		return nil, nil, nil
	}
	var got fetchedBody
	cleanup := func() {}
	for item := data.Next(); item != nil; item = data.Next() {
		switch item := item.(type) {
		case imapclient.FetchItemDataUID:
			got.UID = item.UID
		case imapclient.FetchItemDataBodySection:
			if item.Literal == nil {
				continue
			}
			if got.UID != 0 {
				got.Body = item.Literal
				return &got, cleanup, nil
			}
			spooled, remove, err := spool(item.Literal)
			if err != nil {
				return nil, nil, err
			}
			got.Body, cleanup = spooled, remove
		}
	}
	if got.UID == 0 || got.Body == nil {
		cleanup()
		return nil, nil, fmt.Errorf("server sent a FETCH response without a UID or a body (message %d)", data.SeqNum)
	}
	return &got, cleanup, nil
}

// spooledLiteral is a body kept in a temporary file.
type spooledLiteral struct {
	io.Reader
	size int64
}

func (l *spooledLiteral) Size() int64 { return l.size }
