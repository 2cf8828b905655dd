package comparison

import (
	"fmt"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// verify reads every destination account back and compares it with its
// source: "exact" when imaptest.Diff finds nothing, else a summary of the
// differences. It returns the message count of each account too.
func (r *run) verify(b *testing.B) (string, []int) {
	b.Helper()
	total, diffs := newFindings(), 0
	var counts []int
	for i, a := range r.src.accounts {
		got := r.dst.Read(b, a.dstLogin)
		counts = append(counts, len(got.Messages))
		if d := imaptest.Diff(r.src.want[i], got); len(d) > 0 {
			diffs += len(d)
			total.add(compareCorpora(r.src.want[i], got))
		}
	}
	switch summary := total.String(); {
	case diffs == 0:
		return "exact", counts
	case summary == "":
		return fmt.Sprintf("%d differences", diffs), counts
	default:
		return summary, counts
	}
}

// recount checks, after the re-run, that every destination account still
// holds as many messages as after the first pass, and says how many the
// re-run added or removed if not.
func (r *run) recount(b *testing.B, before []int) string {
	b.Helper()
	delta := 0
	for i, a := range r.src.accounts {
		delta += countMessages(b, r.dst, a.dstLogin, a.dstPassword) - before[i]
	}
	if delta == 0 {
		return ""
	}
	return fmt.Sprintf("re-run changed the count by %+d msgs", delta)
}

// countMessages sums the messages of every folder of an account, with one
// LIST-STATUS (RFC 5819).
func countMessages(b *testing.B, d *imaptest.Dovecot, login, password string) int {
	b.Helper()
	c := d.Login(b, login, password)
	defer func() { c.Logout().Wait() }() //nolint:errcheck // the count is what matters
	list, err := c.List("", "*", &imap.ListOptions{ReturnStatus: &imap.StatusOptions{NumMessages: true}}).Collect()
	if err != nil {
		b.Fatalf("LIST-STATUS %s: %v", login, err)
	}
	n := 0
	for _, l := range list {
		if l.Status != nil && l.Status.NumMessages != nil {
			n += int(*l.Status.NumMessages)
		}
	}
	return n
}
