package transfer

import (
	"context"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// allMailTwins finds, for a destination that is Gmail, the messages its
// All Mail holds already: a message in two source folders is one message
// with two labels there, so the second folder gets the first copy's
// label (UID COPY from All Mail, which in Gmail adds a label) instead of
// a second message. It reads All Mail on a destination session of its
// own, the identities of the messages it has not read yet before each
// look-up: those this attempt appended since are found too.
type allMailTwins struct {
	session    *session
	readUpTo   imap.UID            // identities read for UIDs below it
	byIdentity map[string]imap.UID // the first All Mail message of each identity
}

// gmailTwins returns the attempt's allMailTwins, opening it the first
// time; nil when the destination is not Gmail.
func (r *accountAttempt) gmailTwins(ctx context.Context) (*allMailTwins, error) {
	if r.destinationLabels.allMail == "" {
		return nil, nil
	}
	if r.destinationLabels.twins != nil {
		return r.destinationLabels.twins, nil
	}
	s, err := connect(ctx, &r.job.Destination, "destination", r.job.Tuning)
	if err != nil {
		return nil, err
	}
	if _, err := s.Select(r.destinationLabels.allMail, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		s.Close()
		return nil, s.Failed(err)
	}
	r.destinationLabels.twins = &allMailTwins{session: s, readUpTo: 1, byIdentity: map[string]imap.UID{}}
	return r.destinationLabels.twins, nil
}

// refresh reads the identities of All Mail's messages not read yet.
func (x *allMailTwins) refresh() error {
	var from imap.UIDSet
	from.AddRange(x.readUpTo, 0) // readUpTo:*
	msgs, err := x.session.identities(from)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.UID < x.readUpTo {
			continue // "n:*" takes in the highest message even below n
		}
		if _, ok := x.byIdentity[m.Identity]; !ok {
			x.byIdentity[m.Identity] = m.UID
		}
		x.readUpTo = max(x.readUpTo, m.UID+1)
	}
	return nil
}

// labelTwins gives the folder the candidates whose message All Mail
// holds already, by copying that message into it, and returns their map
// entries and the candidates left to append. A twin serves a folder once:
// a source folder holding a message twice gets it twice. Trash and Spam
// get none: in Gmail a COPY there takes the message from every label.
func (fs *folderSync) labelTwins(ctx context.Context, candidates []message) (labelled []syncstate.Mapping, rest []message, err error) {
	if p := fs.plan; fs.r.destinationLabels.bins[p.Destination] || p.CreateRole == imap.MailboxAttrTrash || p.CreateRole == imap.MailboxAttrJunk {
		return nil, candidates, nil
	}
	twins, err := fs.r.gmailTwins(ctx)
	if err != nil || twins == nil {
		return nil, candidates, err
	}
	if err := twins.refresh(); err != nil {
		return nil, nil, err
	}
	if len(twins.byIdentity) == 0 {
		return nil, candidates, nil // nothing to find: the sources' headers need not be read
	}
	withIdentity, err := fs.sourceIdentities(candidates)
	if err != nil {
		return nil, nil, err
	}
	if fs.twinsUsed == nil {
		fs.twinsUsed = map[imap.UID]bool{}
	}
	for _, msg := range withIdentity {
		there, ok := twins.byIdentity[msg.Identity]
		if !ok || msg.Identity == "" || fs.twinsUsed[there] {
			rest = append(rest, msg)
			continue
		}
		var uid imap.UIDSet
		uid.AddNum(there)
		data, err := twins.session.Copy(uid, fs.plan.Destination).Wait()
		if err != nil {
			if refused(err) {
				rest = append(rest, msg) // appended instead
				continue
			}
			return nil, nil, twins.session.Failed(err)
		}
		dest, ok := data.DestUIDs.Nums()
		if !ok || len(dest) != 1 || dest[0] < fs.destUIDNext {
			// No COPYUID; or a UID the folder had: the message had the
			// label already (a twin of another message of this folder),
			// and this one needs a message of its own.
			rest = append(rest, msg)
			continue
		}
		fs.twinsUsed[there] = true
		// Gmail keeps one set of flags per message, whatever its labels:
		// the first folder's stay. Writing this folder's would undo them
		// there, and the next attempt would write them back, pass after pass.
		// The map takes this folder's as written, so that only a later
		// change on the source is carried.
		labelled = append(labelled, syncstate.Mapping{Source: uint32(msg.UID), Destination: uint32(dest[0]), Flags: flagStrings(fs.wanted(msg.Flags))})
		fs.destUIDNext = max(fs.destUIDNext, dest[0]+1)
	}
	return labelled, rest, nil
}
