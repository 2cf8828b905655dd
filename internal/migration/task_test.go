package migration

import (
	"testing"
	"time"
)

// TestPaceWords: a test that goes at a server's pace of seconds a login
// says so, naming the server whose logins take that long where one does,
// with what is left and what can run; one at a normal pace, or not under
// way, says nothing.
func TestPaceWords(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	began := now.Add(-100 * time.Second)
	for _, c := range []struct {
		name    string
		figures TestFigures
		working int64
		want    string
	}{
		{"slow", TestFigures{Total: 1000, Tested: 30, Running: true, StartedAt: &began}, 25,
			"the servers answer about one login every 3.3 s (as a server that delays logins after failures does): " +
				"the 970 accounts left would take about 54 minutes; the 25 whose logins work can run now"},
		{"very slow", TestFigures{Total: 1730, Tested: 30, Running: true, StartedAt: &began}, 25,
			"the servers answer about one login every 3.3 s (as a server that delays logins after failures does): " +
				"the 1700 accounts left would take about 1 hour 34 minutes; the 25 whose logins work can run now"},
		{"slow, nearly done", TestFigures{Total: 31, Tested: 30, Running: true, StartedAt: &began}, 0,
			"the servers answer about one login every 3.3 s (as a server that delays logins after failures does): " +
				"the 1 account left would take under a minute"},
		{"the source delays its logins", TestFigures{Total: 1000, Tested: 30, Running: true, StartedAt: &began,
			SourceLogins: 30 * 15 * time.Second, DestinationLogins: 30 * 40 * time.Millisecond, SourceHost: "imap.old.example", DestinationHost: "imap.new.example"}, 25,
			"imap.old.example (the source) takes about 15 s a login (as a server that delays logins after failures does): " +
				"the 970 accounts left would take about 54 minutes; the 25 whose logins work can run now"},
		{"both delay, the destination more", TestFigures{Total: 1000, Tested: 30, Running: true, StartedAt: &began,
			SourceLogins: 30 * 5 * time.Second, DestinationLogins: 30 * 6 * time.Second, SourceHost: "imap.old.example", DestinationHost: "imap.new.example"}, 0,
			"imap.new.example (the destination) takes about 6.0 s a login, and imap.old.example (the source) about 5.0 s (as a server that delays logins after failures does): " +
				"the 970 accounts left would take about 54 minutes"},
		{"good logins lower the average", TestFigures{Total: 1000, Tested: 30, Running: true, StartedAt: &began,
			SourceLogins: 30 * 800 * time.Millisecond, DestinationLogins: 30 * 30 * time.Millisecond, SourceHost: "imap.old.example", DestinationHost: "imap.new.example"}, 0,
			"imap.old.example (the source) takes about 0.8 s a login (as a server that delays logins after failures does): " +
				"the 970 accounts left would take about 54 minutes"},
		{"slow, but not the logins", TestFigures{Total: 1000, Tested: 30, Running: true, StartedAt: &began,
			SourceLogins: 30 * 40 * time.Millisecond, DestinationLogins: 30 * 30 * time.Millisecond}, 0,
			"the servers answer about one login every 3.3 s (as a server that delays logins after failures does): " +
				"the 970 accounts left would take about 54 minutes"},
		{"hosts not named", TestFigures{Total: 1000, Tested: 30, Running: true, StartedAt: &began, SourceLogins: 30 * 15 * time.Second}, 0,
			"the source server takes about 15 s a login (as a server that delays logins after failures does): " +
				"the 970 accounts left would take about 54 minutes"},
		{"a normal pace", TestFigures{Total: 1000, Tested: 900, Running: true, StartedAt: &began}, 800, ""},
		{"not under way", TestFigures{Total: 1000, Tested: 30, StartedAt: &began}, 25, ""},
		{"nothing tested yet", TestFigures{Total: 1000, Running: true, StartedAt: &began}, 0, ""},
	} {
		if got := c.figures.PaceWords(now, c.working); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
