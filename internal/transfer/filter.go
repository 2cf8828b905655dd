package transfer

import (
	"fmt"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
)

// filter splits messages into those the options let through and a count
// of those left out: flagged \Deleted (unless CopyDeleted), larger than
// MaxMessageBytes, or dated before Since.
func (o *Options) filter(messages []message) (eligible []message, leftOut int) {
	for _, msg := range messages {
		if o.wantsMessage(msg.Flags, msg.Size, msg.Date) {
			eligible = append(eligible, msg)
		} else {
			leftOut++
		}
	}
	return eligible, leftOut
}

func (o *Options) wantsMessage(flags []imap.Flag, size int64, date time.Time) bool {
	if !o.CopyDeleted && slices.ContainsFunc(flags, func(f imap.Flag) bool {
		return canonicalFlag(f) == canonicalFlag(imap.FlagDeleted)
	}) {
		return false
	}
	if o.MaxMessageBytes > 0 && size > o.MaxMessageBytes {
		return false
	}
	return o.Since.IsZero() || !dayOf(date).Before(dayOf(o.Since))
}

// filterKey names what filter lets through, for FolderState.Filter.
func (o *Options) filterKey() string {
	since := ""
	if !o.Since.IsZero() {
		since = dayOf(o.Since).Format(time.DateOnly)
	}
	return fmt.Sprintf("max=%d since=%s deleted=%t", o.MaxMessageBytes, since, o.CopyDeleted)
}

// dayOf is the calendar day of t in its own zone: IMAP's SINCE compares
// dates "disregarding time and timezone" (RFC 9051 §6.4.4), and so do we.
func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// searchCriteria selects on the server what filter lets through, among
// the messages up to lastUID.
func (o *Options) searchCriteria(lastUID imap.UID) *imap.SearchCriteria {
	var uids imap.UIDSet
	uids.AddRange(1, lastUID)
	c := &imap.SearchCriteria{UID: []imap.UIDSet{uids}, Since: o.Since}
	if !o.CopyDeleted {
		c.NotFlag = []imap.Flag{imap.FlagDeleted}
	}
	if o.MaxMessageBytes > 0 {
		c.Smaller = o.MaxMessageBytes + 1
	}
	return c
}
