package transfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"slices"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// Read-back (docs/design.md#verification): after each window of copies,
// the destination's copies are read back, their size and a digest of
// their header, and compared with what was sent. A destination that
// rewrites mail (Cyrus' munge8bit, a gateway that re-encodes) is told
// apart from one that lost it: the copy is there, but not the message.

// AlteredCopy is a copy the destination holds that differs from what was
// sent.
type AlteredCopy = syncstate.AlteredCopy

// headerDigest hashes a message's header as it streams by: the bytes up to
// and with the blank line that ends it (RFC 5322 §2.1).
type headerDigest struct {
	h     hash.Hash
	match int // bytes of "\r\n\r\n" matched so far
	ended bool
}

func newHeaderDigest() *headerDigest { return &headerDigest{h: sha256.New()} }

// Write implements io.Writer: it takes every byte, and hashes those of
// the header.
func (d *headerDigest) Write(p []byte) (int, error) {
	if d.ended {
		return len(p), nil
	}
	for i, c := range p {
		switch {
		case c == "\r\n\r\n"[d.match]:
			d.match++
		case c == '\r':
			d.match = 1
		default:
			d.match = 0
		}
		if d.match == 4 {
			d.h.Write(p[:i+1])
			d.ended = true
			return len(p), nil
		}
	}
	d.h.Write(p)
	return len(p), nil
}

// subjectOf is the Subject field of a header, or empty.
func subjectOf(header []byte) string {
	for _, line := range bytes.Split(header, []byte("\r\n")) {
		if name, value, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Subject")) {
			return string(bytes.TrimSpace(value))
		}
	}
	return ""
}

// sum is the digest of the header; false for a message without a blank
// line, whose header a server may end differently: only its size counts.
func (d *headerDigest) sum() ([]byte, bool) { return d.h.Sum(nil), d.ended }

// digests is what the read-back compares of a message: its size, the
// digest of its header (nil for a message without a blank line, whose
// header a server may end differently: only its size counts) and, where
// whole bodies are compared, the digest of all its bytes.
type digests struct {
	size         int64
	header, body []byte
}

// sentCopy is what the destination was sent for one copy.
type sentCopy struct {
	source      message
	destination imap.UID
	sent        digests
}

// readBack reads back the copies sent, from the destination folder the
// main session has selected, and returns those that differ. A copy that
// is not there is not altered: the UID map's verification counts it.
func (fs *folderSync) readBack(sent []sentCopy) ([]AlteredCopy, error) {
	if len(sent) == 0 {
		return nil, nil
	}
	var uids imap.UIDSet
	for _, c := range sent {
		uids.AddNum(c.destination)
		fs.readBackUIDs[c.destination] = true
	}
	// The FETCH's answer comes after the copies' EXISTS, whether the
	// server sent them at APPEND (the appender hands them back to the
	// client ahead of anything later, sharedConn) or sends them now.
	read, err := fs.r.destination.readDigests(uids, fs.r.job.Options.ReadBackBodies)
	if err != nil {
		return nil, err
	}
	fs.destinationSettled = true
	altered := alteredCopies(sent, read)
	return altered, fs.nameAltered(altered)
}

// readBackEarlier, in a verifying pass (Job.ReadBackAll), compares the
// copies this pass did not read back (those earlier passes made or this
// one adopted) with their source messages: both sides are read, a batch
// of map entries at a time, by the sessions that have the folders open.
func (fs *folderSync) readBackEarlier(ctx context.Context) error {
	entries, err := fs.r.sync.mappings(ctx, fs.folder, 1, syncstate.MaxUID)
	if err != nil {
		return err
	}
	entries = slices.DeleteFunc(entries, func(e syncstate.Mapping) bool { return fs.readBackUIDs[imap.UID(e.Destination)] })
	bodies := fs.r.job.Options.ReadBackBodies
	for batch := range slices.Chunk(entries, readBackBatch) {
		var sources, copies imap.UIDSet
		for _, e := range batch {
			sources.AddNum(imap.UID(e.Source))
			copies.AddNum(imap.UID(e.Destination))
		}
		original, err := fs.r.source.readDigests(sources, bodies)
		if err != nil {
			return err
		}
		read, err := fs.r.destination.readDigests(copies, bodies)
		if err != nil {
			return err
		}
		var altered []AlteredCopy
		for _, e := range batch {
			sent, onSource := original[imap.UID(e.Source)]
			got, there := read[imap.UID(e.Destination)]
			if !onSource || !there {
				continue // expunged on the source since, or missing: the map's verification counts it
			}
			if what := difference(sent, got); what != "" {
				altered = append(altered, AlteredCopy{SourceUID: e.Source, DestinationUID: e.Destination, What: what})
			}
		}
		if err := fs.nameAltered(altered); err != nil {
			return err
		}
		fs.altered = append(fs.altered, altered...)
	}
	slices.SortFunc(fs.altered, func(a, b AlteredCopy) int { return int(a.SourceUID) - int(b.SourceUID) })
	return nil
}

// readBackBatch is how many copies readBackEarlier reads at a time: the
// UID sets stay short, and the headers of a batch are read as they come.
const readBackBatch = 500

// readDigests reads the digests of the messages uids of the selected
// folder: their sizes and headers (BODY.PEEK[HEADER]), or with bodies
// their whole bodies, streamed through the digests, nothing kept but the
// sums, whatever the messages' sizes.
func (s *session) readDigests(uids imap.UIDSet, bodies bool) (map[imap.UID]digests, error) {
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true}
	if bodies {
		section = &imap.FetchItemBodySection{Peek: true}
	}
	cmd := s.Fetch(uids, &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{section}})
	out := map[imap.UID]digests{}
	for {
		msg := cmd.Next()
		if msg == nil {
			break
		}
		var uid imap.UID
		var d digests
		read := false
		for item := msg.Next(); item != nil; item = msg.Next() {
			switch item := item.(type) {
			case imapclient.FetchItemDataUID:
				uid = item.UID
			case imapclient.FetchItemDataRFC822Size:
				d.size = item.Size
			case imapclient.FetchItemDataBodySection:
				if item.Literal == nil {
					continue
				}
				head, all := newHeaderDigest(), sha256.New()
				w := io.Writer(head)
				if bodies {
					w = io.MultiWriter(head, all)
				}
				if _, err := io.Copy(w, item.Literal); err != nil {
					cmd.Close() //nolint:errcheck // the error is err's
					return nil, s.Failed(err)
				}
				if sum, ended := head.sum(); ended {
					d.header = sum
				}
				if bodies {
					d.body = all.Sum(nil)
				}
				read = true
			}
		}
		if uid != 0 && read {
			out[uid] = d
		}
	}
	if err := cmd.Close(); err != nil {
		return nil, s.Failed(err)
	}
	return out, nil
}

// nameAltered reads the subjects of the altered copies' messages from the
// source folder the source session has open: a few header lines, read
// only when a copy differs.
func (fs *folderSync) nameAltered(altered []AlteredCopy) error {
	uids := make([]uint32, len(altered))
	for i, a := range altered {
		uids[i] = a.SourceUID
	}
	subjects, err := fs.sourceSubjects(uids)
	if err != nil {
		return fs.r.source.Failed(err)
	}
	for i := range altered {
		altered[i].Subject = subjects[altered[i].SourceUID]
	}
	return nil
}

// nameFailures reads the subjects of the messages a window could not
// copy, so that a person can tell which they are. It is a courtesy: a
// source that could not deliver a message may not deliver its header
// either, and the subject then stays empty; a broken connection shows at
// the next command.
func (fs *folderSync) nameFailures(failures []syncstate.MessageFailure) {
	uids := make([]uint32, len(failures))
	for i, f := range failures {
		uids[i] = f.UID
	}
	subjects, err := fs.sourceSubjects(uids)
	if err != nil {
		fs.r.logger.Debug("the subjects of the messages not copied could not be read", "err", err)
	}
	for i := range failures {
		failures[i].Subject = subjects[failures[i].UID]
	}
}

// sourceSubjects reads the Subject lines of messages from the source
// folder the source session has open: one FETCH of a header line each,
// none for no message.
func (fs *folderSync) sourceSubjects(uids []uint32) (map[uint32]string, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	src := fs.r.source
	var set imap.UIDSet
	for _, uid := range uids {
		set.AddNum(imap.UID(uid))
	}
	subject := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Subject"}, Peek: true}
	msgs, err := src.Fetch(set, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{subject}}).Collect()
	if err != nil {
		return nil, err
	}
	subjects := make(map[uint32]string, len(msgs))
	for _, m := range msgs {
		subjects[uint32(m.UID)] = subjectOf(m.FindBodySection(subject))
	}
	return subjects, nil
}

// sentCopyOf is what was sent for msg, read from its body, copied to uid.
func sentCopyOf(msg message, uid imap.UID, body *sourceBody) sentCopy {
	c := sentCopy{source: msg, destination: uid, sent: digests{size: body.read}}
	if sum, ended := body.digest.sum(); ended {
		c.sent.header = sum
	}
	if body.whole != nil {
		c.sent.body = body.whole.Sum(nil)
	}
	return c
}
