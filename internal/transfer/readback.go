package transfer

import (
	"bytes"
	"crypto/sha256"
	"fmt"
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
// sent: what a careful administrator signs off on, told apart from a
// message not copied.
type AlteredCopy struct {
	SourceUID, DestinationUID uint32
	Subject                   string // the source message's
	What                      string // e.g. "its size went from 1 234 to 1 230 bytes"
}

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

// sentCopy is what the destination was sent for one copy.
type sentCopy struct {
	source      message
	destination imap.UID
	size        int64
	header      []byte // nil: compare the size alone
	body        []byte // the whole body's digest, with Options.ReadBackBodies
}

// readBack reads back the copies sent, from the destination folder the
// main session has selected, and returns those that differ. A copy that
// is not there is not altered: the UID map's verification counts it.
func (fs *folderSync) readBack(sent []sentCopy) ([]AlteredCopy, error) {
	if len(sent) == 0 {
		return nil, nil
	}
	dst := fs.r.destination
	// The copies came over the other connection: the main session
	// learns of them first.
	if err := dst.Noop().Wait(); err != nil {
		return nil, dst.failed(err)
	}
	byUID := make(map[imap.UID]sentCopy, len(sent))
	var uids imap.UIDSet
	for _, c := range sent {
		byUID[c.destination] = c
		uids.AddNum(c.destination)
	}
	read := fs.readBackHeaders
	if fs.r.job.Options.ReadBackBodies {
		read = fs.readBackBodies
	}
	altered, err := read(byUID, uids)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(altered, func(a, b AlteredCopy) int { return int(a.SourceUID) - int(b.SourceUID) })
	return altered, fs.nameAltered(altered)
}

// readBackHeaders reads the copies' sizes and headers back.
func (fs *folderSync) readBackHeaders(byUID map[imap.UID]sentCopy, uids imap.UIDSet) ([]AlteredCopy, error) {
	dst := fs.r.destination
	header := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true}
	cmd := dst.Fetch(uids, &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{header}})
	var altered []AlteredCopy
	for {
		msg := cmd.Next()
		if msg == nil {
			break
		}
		buf, err := msg.Collect()
		if err != nil {
			cmd.Close() //nolint:errcheck // the error is err's
			return nil, dst.failed(err)
		}
		c, ok := byUID[buf.UID]
		if !ok {
			continue
		}
		digest := sha256.Sum256(buf.FindBodySection(header))
		if what := difference(c, buf.RFC822Size, digest[:], nil); what != "" {
			altered = append(altered, AlteredCopy{SourceUID: uint32(c.source.UID), DestinationUID: uint32(c.destination),
				What: what})
		}
	}
	if err := cmd.Close(); err != nil {
		return nil, dst.failed(err)
	}
	return altered, nil
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
		return fs.r.source.failed(err)
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

// readBackBodies reads the copies back whole, streaming each through the
// digests of its header and of all its bytes: nothing is kept but the
// sums, whatever the messages' sizes.
func (fs *folderSync) readBackBodies(byUID map[imap.UID]sentCopy, uids imap.UIDSet) ([]AlteredCopy, error) {
	dst := fs.r.destination
	whole := &imap.FetchItemBodySection{Peek: true}
	cmd := dst.Fetch(uids, &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{whole}})
	var altered []AlteredCopy
	for {
		msg := cmd.Next()
		if msg == nil {
			break
		}
		var uid imap.UID
		var size int64
		var header, body []byte
		read := false
		for {
			item := msg.Next()
			if item == nil {
				break
			}
			switch item := item.(type) {
			case imapclient.FetchItemDataUID:
				uid = item.UID
			case imapclient.FetchItemDataRFC822Size:
				size = item.Size
			case imapclient.FetchItemDataBodySection:
				head, all := newHeaderDigest(), sha256.New()
				if _, err := io.Copy(io.MultiWriter(head, all), item.Literal); err != nil {
					cmd.Close() //nolint:errcheck // the error is err's
					return nil, dst.failed(err)
				}
				if sum, ended := head.sum(); ended {
					header = sum
				}
				body, read = all.Sum(nil), true
			}
		}
		c, ok := byUID[uid]
		if !ok || !read {
			continue
		}
		if what := difference(c, size, header, body); what != "" {
			altered = append(altered, AlteredCopy{SourceUID: uint32(c.source.UID), DestinationUID: uint32(c.destination), What: what})
		}
	}
	if err := cmd.Close(); err != nil {
		return nil, dst.failed(err)
	}
	return altered, nil
}

// difference says how a copy read back differs from what was sent, by its
// size, the digest of its header (nil: not read whole to its end) and, when
// bodies are compared, the digest of all its bytes; empty when it does not.
func difference(c sentCopy, size int64, header, body []byte) string {
	switch {
	case size != c.size:
		return fmt.Sprintf("its size went from %d to %d bytes", c.size, size)
	case c.header != nil && header != nil && !bytes.Equal(header, c.header):
		return "its header was rewritten (same size, other bytes)"
	case c.body != nil && !bytes.Equal(body, c.body):
		return "its body was rewritten (same size and header, other bytes)"
	}
	return ""
}

// sentCopyOf is what was sent for msg, read from its body, copied to uid.
func sentCopyOf(msg message, uid imap.UID, body *sourceBody) sentCopy {
	c := sentCopy{source: msg, destination: uid, size: body.read}
	if sum, ended := body.digest.sum(); ended {
		c.header = sum
	}
	if body.whole != nil {
		c.body = body.whole.Sum(nil)
	}
	return c
}
