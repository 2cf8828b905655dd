package transfer

import (
	"context"
	"log/slog"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// countSource counts the messages and bytes of the source folders that
// plans copy, before the first is copied, so that the attempt's progress has
// a total (countFolders). A folder unchanged since the last attempt, which
// the copy skips, keeps the count that attempt stored: a re-run with nothing
// new does not read every folder again.
func (r *accountAttempt) countSource(ctx context.Context, plans []folderPlan) error {
	var boxes []mailbox
	known := map[string]SourceCount{}
	for _, plan := range plans {
		prev, ok := r.sync.states[plan.Source.Name]
		// A state from before sizes were kept (no bytes for messages)
		// is counted again.
		if ok && r.folderFacts(plan).unchanged() && (prev.SourceBytes > 0 || prev.SourceMessages == 0 || (plan.Source.Reads != "" && prev.Covered == 0)) {
			messages := int(prev.SourceMessages)
			if plan.Source.Reads != "" {
				messages = prev.Covered // of All Mail's, those routed to it
			}
			known[plan.Source.Name] = SourceCount{Messages: messages, Bytes: prev.SourceBytes}
			continue
		}
		if plan.Source.Reads != "" { // a Gmail label: the messages routed to it
			labels, err := r.labelIndex(ctx, nil)
			if err != nil {
				return err
			}
			known[plan.Source.Name] = labels.counts[plan.Source.Name]
			continue
		}
		boxes = append(boxes, plan.Source)
	}
	count, folders, err := countFolders(r.source, boxes, r.logger)
	if err != nil {
		return err
	}
	for name, folder := range known {
		folders[name] = folder
		count.Messages += folder.Messages
		count.Bytes += folder.Bytes
	}
	r.folderCounts = folders
	r.progress.SourceMessages, r.progress.SourceBytes, r.progress.SourceCounted = int64(count.Messages), count.Bytes, true
	return nil
}

// SourceCount is the size of an account's source folders.
type SourceCount struct {
	Messages int
	Bytes    int64
}

// CheckLoginAndCount is CheckLogin for a source, which then counts the
// folders that opts let through (countFolders), so that a task's totals
// are known before its first pass. Only the login's failure is an error: a
// count that fails leaves counted false.
func CheckLoginAndCount(ctx context.Context, side imapconn.Side, tuning Tuning, opts Options) (count SourceCount, counted bool, err error) {
	s, err := connect(ctx, &side, "source", tuning.withDefaults())
	if err != nil {
		return count, false, err
	}
	defer s.Close()
	boxes, _, err := s.listMailboxes()
	if err != nil {
		return count, false, nil
	}
	model := sourceModelOf(s.Caps(), &opts)
	var wanted []mailbox
	for _, b := range model.folders(boxes) {
		if b.Selectable && opts.wants(b.Name) {
			wanted = append(wanted, b)
		}
	}
	count, _, err = countFolders(s, model.counted(wanted), slog.New(slog.DiscardHandler))
	return count, err == nil, nil
}

// countFolders counts the messages and bytes of boxes on the source src:
// from LIST-STATUS where the listing has it, from STATUS otherwise, with
// SIZE (RFC 8438) where the server offers it, else the sum of a FETCH
// RFC822.SIZE of the folder. Folders count whole: messages that the
// options leave out are in the total. A folder the server will not count
// is left out of it; a broken connection is an error. It returns the
// total and each folder's count.
func countFolders(src *session, boxes []mailbox, logger *slog.Logger) (SourceCount, map[string]SourceCount, error) {
	withSize := src.Caps().Has(imap.CapStatusSize) || src.Caps().Has(imap.CapIMAP4rev2)
	var count SourceCount
	folders := make(map[string]SourceCount, len(boxes))
	for _, box := range boxes {
		status := box.Status
		if status == nil || status.NumMessages == nil || (withSize && status.Size == nil) {
			data, err := src.Status(box.Name, &imap.StatusOptions{NumMessages: true, Size: withSize}).Wait()
			if err != nil {
				if !refused(err) { // the connection, or a throttle: not this folder's
					return count, nil, src.Failed(err)
				}
				logger.Warn("the source would not count a folder; the total leaves it out", "folder", box.Name, "err", err)
				continue
			}
			status = data
		}
		if status.NumMessages == nil {
			continue
		}
		folder := SourceCount{Messages: int(*status.NumMessages)}
		switch {
		case status.Size != nil:
			folder.Bytes = *status.Size
		case folder.Messages > 0:
			size, err := sumSizes(src, box.Name)
			if err != nil {
				return count, nil, err
			}
			folder.Bytes = size
		}
		folders[box.Name] = folder
		count.Messages += folder.Messages
		count.Bytes += folder.Bytes
	}
	return count, folders, nil
}

// sumSizes adds up the RFC822.SIZE of every message of a source folder,
// opened read-only, for a server without STATUS=SIZE: a line per message,
// no body read.
func sumSizes(src *session, folder string) (int64, error) {
	if _, err := src.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		if !refused(err) {
			return 0, src.Failed(err)
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
			src.Abandon() // see collectMessages
			return 0, src.Failed(err)
		}
		total += buf.RFC822Size
	}
	if err := cmd.Close(); err != nil && !refused(err) {
		return 0, src.Failed(err)
	}
	return total, nil
}
