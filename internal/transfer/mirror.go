package transfer

import (
	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// mirror expunges from the destination the copies of messages expunged
// from the source (Options.MirrorDeletions), and drops them from keep.
// unlisted are the mapped messages the source's listing lacked; each is
// looked up again by UID first, since a message expunged while the
// listing ran shifts the sequence numbers it went by.
func (fs *folderSync) mirror(keep *[]syncstate.Mapping, unlisted []syncstate.Mapping) error {
	gone, err := fs.expungedAtSource(unlisted)
	if err != nil || len(gone) == 0 {
		return err
	}
	var uids imap.UIDSet
	for _, e := range gone {
		uids.AddNum(imap.UID(e.Destination))
	}
	if expunged, err := fs.expunge(uids); err != nil || !expunged {
		return err
	}
	*keep = withoutSources(*keep, gone)
	fs.r.logger.Info("mirrored deletions", "folder", fs.plan.Destination, "messages", len(gone))
	return nil
}

// expungedAtSource returns the entries whose source message is gone.
func (fs *folderSync) expungedAtSource(entries []syncstate.Mapping) ([]syncstate.Mapping, error) {
	var uids imap.UIDSet
	for _, e := range entries {
		uids.AddNum(imap.UID(e.Source))
	}
	present, err := fs.r.source.present(uids)
	if err != nil {
		return nil, err
	}
	return goneAtSource(entries, present), nil
}
