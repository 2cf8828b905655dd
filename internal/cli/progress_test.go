package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

func TestBar(t *testing.T) {
	t.Parallel()
	tests := []struct {
		done, total int64
		want        string
	}{
		{0, 0, "[..........]   0%"},
		{0, 10, "[..........]   0%"},
		{5, 10, "[#####.....]  50%"},
		{10, 10, "[##########] 100%"},
		{12, 10, "[##########] 100%"}, // a total that grew late
	}
	for _, tt := range tests {
		if got := bar(tt.done, tt.total, 10); got != tt.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tt.done, tt.total, got, tt.want)
		}
	}
}

func TestEstimateAndDurationText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		left, perSecond float64
		want            string
	}{
		{100, 10, "10s"},
		{90, 1, "1m30s"},
		{0, 10, "-"},  // nothing left
		{100, 0, "-"}, // no pace yet: unknown, not infinite
	}
	for _, tt := range tests {
		if got := durationText(estimate(tt.left, tt.perSecond)); got != tt.want {
			t.Errorf("estimate(%v, %v) = %s, want %s", tt.left, tt.perSecond, got, tt.want)
		}
	}
}

// TestBoardPaceAndETA: rates are averages since the follow began, and the
// ETA goes by accounts finishing while some are queued, by messages after.
func TestBoardPaceAndETA(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := newBoard()
	b.setTask(api.Task{Id: 7, State: api.TaskStateRunning, Accounts: api.AccountCounts{Total: 4, Queued: 3, Running: 1}}, start)
	alice := api.Account{Id: 1, SourceLogin: "alice", State: api.AccountStateRunning, Progress: api.Progress{MessagesTotal: 100}}
	b.setAccount(alice, start)

	alice.Progress.MessagesCopied, alice.Progress.BytesCopied = 50, 10e6
	b.setAccount(alice, start.Add(10*time.Second))
	b.setTask(api.Task{Id: 7, State: api.TaskStateRunning, Accounts: api.AccountCounts{Total: 4, Queued: 1, Running: 1, Completed: 2},
		Totals: api.Totals{MessagesCopied: 250, BytesCopied: 50e6}}, start.Add(10*time.Second))
	figures, pace := b.overall()
	if figures != "task 7 running: 2/4 accounts done, 250 messages, 50.0 MB" || pace != "5.0 MB/s, ETA 10s" {
		t.Errorf("overall: %q, %q", figures, pace) // 2 accounts left at 2 per 10 s
	}
	v := b.running()[0]
	if got := v.figures(false) + "  " + v.pace(b.now); got != "alice  50/100 messages  10.0 MB  1.0 MB/s  ETA 10s" {
		t.Errorf("alice: %q", got)
	}

	// Once counted, the account's total is its source's, not the
	// messages planned so far.
	alice.Progress.SourceCounted, alice.Progress.SourceMessages = true, 400
	b.setAccount(alice, start.Add(10*time.Second))
	if got := b.running()[0].figures(false); got != "alice  50/400 messages  10.0 MB" {
		t.Errorf("alice counted: %q", got)
	}
	// With every account of the pass counted, the time left goes by the
	// pass: a quarter of its bytes in 20 s leaves 60 s.
	b.pass = &api.Pass{StartedAt: start.Add(-10 * time.Second), SourceMessages: 1000, SourceBytes: 200e6,
		MessagesCopied: 250, BytesCopied: 50e6}
	if _, pace := b.overall(); pace != "5.0 MB/s, ETA 1m0s" {
		t.Errorf("overall by the pass: %q", pace)
	}
	b.pass.AccountsUncounted = 1 // then by accounts, as before
	if _, pace := b.overall(); pace != "5.0 MB/s, ETA 10s" {
		t.Errorf("overall with an account not counted: %q", pace)
	}

	alice.State = api.AccountStateCompleted
	b.setAccount(alice, start.Add(11*time.Second))
	if len(b.running()) != 0 {
		t.Errorf("a completed account is still on the board")
	}
}

// TestPlainDisplayThrottles: a line per account at most once per
// interval, and none while its figures stay the same.
func TestPlainDisplayThrottles(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d := newPlainDisplay(&out, &out, 10*time.Second)
	b := newBoard()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	task := api.Task{Id: 1, State: api.TaskStateRunning, Accounts: api.AccountCounts{Total: 1, Running: 1}}
	alice := api.Account{Id: 1, SourceLogin: "alice", State: api.AccountStateRunning, Progress: api.Progress{MessagesTotal: 1000}}
	for second := range 60 {
		now := start.Add(time.Duration(second) * time.Second)
		if second < 40 { // copying for 40 s, then stuck
			alice.Progress.MessagesCopied = int64(second) * 10
		}
		task.Totals.MessagesCopied = alice.Progress.MessagesCopied
		b.setTask(task, now)
		b.setAccount(alice, now)
		d.progress(b)
	}
	bob := api.Account{Id: 2, SourceLogin: "bob", State: api.AccountStateRunning} // started, nothing counted yet
	b.setAccount(bob, start.Add(time.Hour))
	d.progress(b)
	if strings.Contains(out.String(), "progress bob") {
		t.Errorf("a line for an account without figures:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "progress alice "); n != 5 { // at 0, 10, 20, 30 and 40 s; then stuck, so quiet
		t.Errorf("%d progress lines in a minute, want 5:\n%s", n, out.String())
	}
}

// TestTTYDisplayRedrawsInPlace: an event line goes above the figures,
// which are erased and drawn again below it.
func TestTTYDisplayRedrawsInPlace(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d := &ttyDisplay{out: &out, width: func() int { return 40 }}
	b := newBoard()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b.setTask(api.Task{Id: 1, State: api.TaskStateRunning}, now)
	b.setAccount(api.Account{Id: 1, SourceLogin: "alice", State: api.AccountStateRunning}, now)
	d.progress(b)
	out.Reset()
	d.line("12:00:00  account.done  bob: done")
	want := "\x1b[2F\x1b[J12:00:00  account.done  bob: done\ntask 1 running"
	if !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "\n  alice  [") {
		t.Errorf("after an event line: %q", out.String())
	}
	// Figures are cut to the terminal's width: a wrapped line would take
	// two rows where erase moves up one.
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")[1:] {
		if n := len([]rune(line)); n > 39 || !strings.HasSuffix(line, "…") {
			t.Errorf("%d columns on a terminal of 40: %q", n, line)
		}
	}
}

// TestTestCountsLeaveOutUntestedAccounts: an account whose logins were
// not tested (a test of a selection, or one canceled) is not counted as
// working.
func TestTestCountsLeaveOutUntestedAccounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		working, refused, accounts int
		want                       string
	}{
		{2, 0, 2, "logins of 2 of 2 accounts work on both sides"},
		{94, 5, 2000, "logins of 94 of 2000 accounts work on both sides, 5 refused, 1901 not tested"},
		{0, 0, 3, "logins of 0 of 3 accounts work on both sides, 3 not tested"},
	} {
		if got := testCounts(tc.working, tc.refused, tc.accounts); got != tc.want {
			t.Errorf("testCounts(%d, %d, %d) = %q, want %q", tc.working, tc.refused, tc.accounts, got, tc.want)
		}
	}
}
