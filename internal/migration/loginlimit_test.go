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
