package transfer

import (
	"github.com/emersion/go-imap/v2"
)

// verify counts, after the copy, the source messages this migration
// covers (as the server sees them, with the options as SEARCH criteria)
// and the messages of the destination folder (DESIGN §5).
func (r *accountRun) verify(res *FolderResult, fetched []message) error {
	src, dst := r.source, r.destination
	last := imap.UID(r.state[res.Source].LastUID)
	for _, msg := range fetched {
		last = max(last, msg.UID)
	}
	if last > 0 {
		data, err := src.UIDSearch(r.job.Options.searchCriteria(last), nil).Wait()
		if err != nil {
			return src.side.fail(src.name, classify(err), err)
		}
		res.SourceMessages = len(data.AllUIDs())
	}
	// NOOP lets the server report the destination folder's new size
	// (untagged EXISTS, RFC 9051 §7.4.1).
	if err := dst.Noop().Wait(); err != nil {
		return dst.side.fail(dst.name, classify(err), err)
	}
	res.DestinationMessages = int(dst.Mailbox().NumMessages)
	return nil
}
