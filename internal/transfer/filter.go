package transfer

import (
	"fmt"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
)

// wantsMessage reports whether the options let a message through: not
// flagged \Deleted (unless CopyDeleted), not larger than MaxMessageBytes,
// not dated before Since.
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
	key := fmt.Sprintf("max=%d since=%s deleted=%t", o.MaxMessageBytes, since, o.CopyDeleted)
	if p := o.gmailLabels(); p != GmailFirstLabel { // the default unspelled: older states have no such word
		key += " gmail=" + string(p)
	}
	return key
}

// dayOf is the calendar day of t in its own zone: IMAP's SINCE compares
// dates "disregarding time and timezone" (RFC 9051 §6.4.4), and so do we.
func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
