package migration

import (
	"strings"
	"testing"
	"time"
)

func TestLoginFailureLimitWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	limit := LoginFailureLimit{Max: 4, Window: 10 * time.Minute}
	for _, tc := range []struct {
		limit    LoginFailureLimit
		failures int
		oldest   time.Time
		want     time.Duration
	}{
		{limit, 0, now, 0},
		{limit, 3, now.Add(-time.Minute), 0},
		{limit, 4, now.Add(-time.Minute), 9 * time.Minute},
		{limit, 9, now.Add(-10 * time.Minute), time.Second}, // the window just passed: a moment
		{LoginFailureLimit{}, 100, now, 0},                  // no limit
	} {
		if got := tc.limit.Wait(tc.failures, tc.oldest, now); got != tc.want {
			t.Errorf("%+v.Wait(%d, oldest %s ago) = %s, want %s", tc.limit, tc.failures, now.Sub(tc.oldest), got, tc.want)
		}
	}
	if words := limit.WaitWords("imap.old.example", now.Add(9*time.Minute)); !strings.HasPrefix(words,
		"imap.old.example refused 4 logins within 10m0s, the limit that keeps the server's lock-out (fail2ban) off this host: the login test waits until 12:09:00") {
		t.Errorf("words: %q", words)
	}
}

func TestTestTimeLeft(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	began := now.Add(-10 * time.Minute)
	for _, tc := range []struct {
		figures TestFigures
		left    time.Duration
		known   bool
	}{
		// 522 of 2 000 in 10 min: 1 478 more at the same pace.
		{TestFigures{Total: 2000, Tested: 522, Running: true, StartedAt: &began}, 1478 * (10 * time.Minute / 522), true},
		{TestFigures{Total: 2000, Tested: 0, Running: true, StartedAt: &began}, 0, false},
		{TestFigures{Total: 2000, Tested: 522, Running: false, StartedAt: &began}, 0, false},
		{TestFigures{Total: 5, Tested: 5, Running: true, StartedAt: &began}, 0, false},
	} {
		left, known := tc.figures.TimeLeft(now)
		if left != tc.left || known != tc.known {
			t.Errorf("%+v.TimeLeft = %s %v, want %s %v", tc.figures, left, known, tc.left, tc.known)
		}
	}
}

func TestSlowRefusalWords(t *testing.T) {
	t.Parallel()
	if words := SlowRefusalWords(time.Second); words != "" {
		t.Errorf("a prompt refusal: %q", words)
	}
	if words := SlowRefusalWords(15200 * time.Millisecond); !strings.HasPrefix(words, " (the server took 15s to refuse: it delays logins after failures") {
		t.Errorf("a 15 s refusal: %q", words)
	}
}
