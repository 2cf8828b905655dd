package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// board holds the figures a follow shows: the task, and the accounts
// running now. Rates are averages since the follow first saw the figures,
// so they need no history and do not jump with each refresh.
type board struct {
	task     api.Task
	accounts map[int64]*accountView // running accounts, by id
	since    time.Time              // when the task's figures were first seen
	base     api.Totals             // the task's totals then
	finished int64                  // accounts finished since then
	now      time.Time              // time of the latest figures
	pass     *api.Pass              // the pass under way, when known
}

// accountView is one running account and its figures when first seen.
type accountView struct {
	account api.Account
	since   time.Time
	base    api.Progress
}

func newBoard() *board {
	return &board{accounts: map[int64]*accountView{}}
}

// setTask takes a fresh copy of the task's figures.
func (b *board) setTask(t api.Task, now time.Time) {
	if b.since.IsZero() {
		b.since, b.base = now, t.Totals
		b.finished = -finishedCount(t.Accounts)
	}
	b.task, b.now = t, now
}

func finishedCount(c api.AccountCounts) int64 {
	return c.Completed + c.CompletedWithErrors + c.Failed + c.Canceled
}

// setAccount takes a fresh copy of an account; one no longer running
// leaves the board.
func (b *board) setAccount(a api.Account, now time.Time) {
	if a.State != api.AccountStateRunning {
		delete(b.accounts, a.Id)
		return
	}
	v, ok := b.accounts[a.Id]
	if !ok {
		v = &accountView{since: now, base: a.Progress}
		b.accounts[a.Id] = v
	}
	v.account = a
}

// running lists the running accounts in id order.
func (b *board) running() []*accountView {
	views := make([]*accountView, 0, len(b.accounts))
	for _, v := range b.accounts {
		views = append(views, v)
	}
	slices.SortFunc(views, func(x, y *accountView) int { return int(x.account.Id - y.account.Id) })
	return views
}

// overall sums up the task: its figures, e.g. "task 3 running: 2/5
// accounts done, 1200 messages, 40.1 MB", and its pace, e.g.
// "3.4 MB/s, ETA 1m0s".
func (b *board) overall() (figures, pace string) {
	t := b.task
	figures = fmt.Sprintf("task %d %s: %d/%d accounts done, %d messages, %s MB",
		t.Id, t.State, finishedCount(t.Accounts), t.Accounts.Total, t.Totals.MessagesCopied, megabytes(t.Totals.BytesCopied))
	bytesRate := rate(t.Totals.BytesCopied-b.base.BytesCopied, b.now.Sub(b.since).Seconds())
	return figures, fmt.Sprintf("%.1f MB/s, ETA %s", bytesRate/1e6, durationText(b.eta()))
}

// eta estimates the time left. When every account of the pass under way
// has its source counted, it goes by how much of that the pass has done
// since it began (passLeft); else, with accounts still queued, by the pace
// at which accounts finish; once all have started, by the messages left
// and the pace at which they are copied. Zero means unknown.
func (b *board) eta() time.Duration {
	if p := b.pass; p != nil && p.AccountsUncounted == 0 && p.SourceMessages > 0 {
		return passLeft(*p, b.now)
	}
	t := b.task
	elapsed := b.now.Sub(b.since).Seconds()
	if t.Accounts.Queued > 0 {
		done := b.finished + finishedCount(t.Accounts)
		return estimate(float64(t.Accounts.Queued+t.Accounts.Running), rate(done, elapsed))
	}
	var left float64
	for _, v := range b.accounts {
		left += float64(messagesLeft(v.account.Progress))
	}
	copied := t.Totals.MessagesCopied + t.Totals.MessagesSkipped + t.Totals.MessagesFailed -
		(b.base.MessagesCopied + b.base.MessagesSkipped + b.base.MessagesFailed)
	return estimate(left, rate(copied, elapsed))
}

// figures are one running account's counts, e.g.
// "alice@old.example  300/580 messages  12.0 MB"; with a bar when asked.
func (v *accountView) figures(withBar bool) string {
	p := v.account.Progress
	done := messagesDone(p)
	var b strings.Builder
	b.WriteString(v.account.SourceLogin)
	if withBar {
		fmt.Fprintf(&b, "  %s", bar(done, messagesTotal(p), 20))
	}
	fmt.Fprintf(&b, "  %d/%d messages  %s MB", done, messagesTotal(p), megabytes(p.BytesCopied))
	return b.String()
}

// pace is one running account's rate and estimate, e.g. "1.1 MB/s  ETA 20s".
func (v *accountView) pace(now time.Time) string {
	p := v.account.Progress
	elapsed := now.Sub(v.since).Seconds()
	msgRate := rate(messagesDone(p)-messagesDone(v.base), elapsed)
	return fmt.Sprintf("%.1f MB/s  ETA %s", rate(p.BytesCopied-v.base.BytesCopied, elapsed)/1e6,
		durationText(estimate(float64(messagesLeft(p)), msgRate)))
}

// passLeft is the time a pass needs yet, at the pace at which it did the
// part of its accounts' counted sources that it did: the further of
// messages handled (a re-run skips most, fast) and bytes copied (a first
// copy's time goes by them). Unknown in the first seconds and percent.
func passLeft(p api.Pass, now time.Time) time.Duration {
	done := float64(p.MessagesCopied+p.MessagesSkipped+p.MessagesFailed) / float64(p.SourceMessages)
	if p.SourceBytes > 0 {
		done = max(done, float64(p.BytesCopied)/float64(p.SourceBytes))
	}
	elapsed := now.Sub(p.StartedAt)
	if done < 0.02 || elapsed < 5*time.Second {
		return 0
	}
	if done >= 1 {
		return time.Second
	}
	return time.Duration(float64(elapsed) * (1 - done) / done)
}

// messagesTotal is what an account gets through in a pass: its source's count
// once taken, else the messages planned so far (they grow folder by folder).
func messagesTotal(p api.Progress) int64 {
	if p.SourceCounted {
		return p.SourceMessages
	}
	return p.MessagesTotal
}

func messagesDone(p api.Progress) int64 {
	return p.MessagesCopied + p.MessagesSkipped + p.MessagesFailed
}

func messagesLeft(p api.Progress) int64 {
	return max(messagesTotal(p)-messagesDone(p), 0)
}

// bar draws done of total as "[#####.....]  50%".
func bar(done, total int64, width int) string {
	fraction := 0.0
	if total > 0 {
		fraction = min(float64(done)/float64(total), 1)
	}
	filled := int(fraction * float64(width))
	return fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("#", filled), strings.Repeat(".", width-filled), fraction*100)
}

func rate(amount int64, seconds float64) float64 {
	if seconds <= 0 || amount <= 0 {
		return 0
	}
	return float64(amount) / seconds
}

// estimate is the time to do left units at perSecond; 0 when unknown.
func estimate(left, perSecond float64) time.Duration {
	if left <= 0 || perSecond <= 0 {
		return 0
	}
	return time.Duration(left / perSecond * float64(time.Second))
}

func durationText(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Second).String()
}
