package transfer

import (
	"github.com/emersion/go-imap/v2"
)

// countSource counts the messages and bytes of the source folders that
// plans copy, before the first is copied, so that the run's progress has
// a total: from LIST-STATUS where the listing has it, from STATUS
// otherwise, with SIZE (RFC 8438) where the server offers it, else the
// sum of a FETCH RFC822.SIZE of the folder. Folders count whole: messages
// that the options leave out are in the total. A folder the server will
// not count is left out of it; a broken connection fails the attempt.
func (r *accountRun) countSource(plans []folderPlan) error {
	src := r.source
	withSize := src.Caps().Has(imap.CapStatusSize) || src.Caps().Has(imap.CapIMAP4rev2)
	var messages int
	var bytes int64
	for _, plan := range plans {
		status := plan.Source.Status
		if status == nil || status.NumMessages == nil || (withSize && status.Size == nil) {
			data, err := src.Status(plan.Source.Name, &imap.StatusOptions{NumMessages: true, Size: withSize}).Wait()
			if err != nil {
				if err := src.failed(err); KindOf(err) == KindTransient {
					return err
				}
				r.logger.Warn("the source would not count a folder; the total leaves it out", "folder", plan.Source.Name, "err", err)
				continue
			}
			status = data
		}
		if status.NumMessages == nil {
			continue
		}
		messages += int(*status.NumMessages)
		switch {
		case status.Size != nil:
			bytes += *status.Size
		case *status.NumMessages > 0:
			size, err := r.sumSizes(plan.Source.Name)
			if err != nil {
				return err
			}
			bytes += size
		}
	}
	r.progress.SourceMessages, r.progress.SourceBytes, r.progress.SourceCounted = messages, bytes, true
	return nil
}

// sumSizes adds up the RFC822.SIZE of every message of a source folder,
// opened read-only, for a server without STATUS=SIZE: a line per message,
// no body read.
func (r *accountRun) sumSizes(folder string) (int64, error) {
	src := r.source
	if _, err := src.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		if err := src.failed(err); KindOf(err) == KindTransient {
			return 0, err
		}
		return 0, nil
	}
	var all imap.SeqSet
	all.AddRange(1, 0) // 1:*
	cmd := src.Fetch(all, &imap.FetchOptions{RFC822Size: true})
	var total int64
	for {
		data := cmd.Next()
		if data == nil {
			break
		}
		buf, err := data.Collect()
		if err != nil {
			src.abandon() // see collectMessages
			return 0, src.failed(err)
		}
		total += buf.RFC822Size
	}
	if err := cmd.Close(); err != nil {
		if err := src.failed(err); KindOf(err) == KindTransient {
			return 0, err
		}
	}
	return total, nil
}
