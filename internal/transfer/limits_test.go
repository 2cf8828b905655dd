package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDailyUploadBudgetSpreadsAnAccountOverDays: a destination that takes
// five messages' bytes a day gets twelve messages over three days. Each
// day's run copies what fits and ends paused until the day's bytes leave
// the count, with an account.throttled-style pause that names the budget;
// the next day's run goes on where it was. Every message arrives once.
func TestDailyUploadBudgetSpreadsAnAccountOverDays(t *testing.T) {
	t.Parallel()
	src := startMemServer(t, map[string]string{"ann": "pw"})
	dst := startMemServer(t, map[string]string{"ann": "pw"})
	sc := src.client(t, "ann", "pw")
	var sent []string
	for i := range 12 {
		body := mail(fmt.Sprintf("m%02d@budget", i), fmt.Sprintf("message %02d", i), 2000)
		sent = append(sent, body)
		appendMessages(t, sc, "INBOX", testMessage{Body: body})
	}
	size := int64(len(sent[0]))
	now := time.Now()
	traffic := NewMemoryTraffic(func() time.Time { return now })
	job := Job{Source: src.side("ann", "pw"), Destination: dst.side("ann", "pw"), State: NewMemoryState(),
		Traffic: traffic, Tuning: Tuning{Attempts: 1}}
	job.Destination.Limits.DailyUploadBytes = 5*size + size/2
	var pauses []Throttle
	job.OnThrottled = func(th Throttle) { pauses = append(pauses, th) }

	copied := 0
	for day := 1; ; day++ {
		res, err := Migrate(context.Background(), job)
		copied += res.MessagesCopied
		if err == nil {
			if day != 3 {
				t.Fatalf("done on day %d, want day 3 (5 + 5 + 2 messages)", day)
			}
			break
		}
		var paused *PausedError
		if !errors.As(err, &paused) || day > 3 {
			t.Fatalf("day %d: %v, want a pause until the budget has room", day, err)
		}
		if res.MessagesCopied != 5 {
			t.Errorf("day %d copied %d messages, want the 5 the budget takes", day, res.MessagesCopied)
		}
		if !paused.Budget || paused.Side != "destination" || !strings.Contains(paused.Words, "endpoint's daily upload budget") {
			t.Errorf("day %d: pause %+v, want the destination endpoint's upload budget", day, paused.Throttle)
		}
		if d := paused.Until.Sub(now); d < 24*time.Hour || d > 25*time.Hour {
			t.Errorf("day %d: paused for %v, want until the day's first hour leaves the count (24 to 25 hours)", day, d)
		}
		now = paused.Until
	}
	if copied != 12 || len(pauses) != 2 {
		t.Errorf("copied %d messages with %d pauses, want 12 with 2", copied, len(pauses))
	}
	got := readFolder(t, dst.client(t, "ann", "pw"), "INBOX")
	if len(got) != len(sent) {
		t.Fatalf("the destination holds %d messages, want %d, each once", len(got), len(sent))
	}
	for i, msg := range got {
		if msg.Body != sent[i] {
			t.Errorf("message %d differs from the source's", i)
		}
	}
}

// TestTakeCountsTheLastDay: what fits of a budget over the last 24 hours,
// and when a message that does not fit will.
func TestTakeCountsTheLastDay(t *testing.T) {
	h0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	hours := []TrafficHour{{Hour: h0, Bytes: 60}, {Hour: h0.Add(3 * time.Hour), Bytes: 30}}
	for _, c := range []struct {
		name        string
		hours       []TrafficHour
		sizes       []int64
		taken       int
		bytes       int64
		roomAt      time.Time
		description string
	}{
		{"room for some", hours, []int64{5, 5, 5}, 2, 10, time.Time{}, "90 + 10 fits 100; 5 more does not"},
		{"none fits", hours, []int64{20}, 0, 0, h0.Add(25 * time.Hour), "room once the first hour's 60 leave the count"},
		{"needs both hours gone", hours, []int64{80}, 0, 0, h0.Add(28 * time.Hour), "30 + 80 is still over 100"},
		{"empty day takes a message over the budget", nil, []int64{150, 1}, 1, 150, time.Time{}, "it would never go otherwise"},
	} {
		taken, bytes, roomAt := Take(c.hours, c.sizes, 100)
		if taken != c.taken || bytes != c.bytes || !roomAt.Equal(c.roomAt) {
			t.Errorf("%s: took %d (%d bytes), room at %v; want %d (%d), %v: %s", c.name, taken, bytes, roomAt, c.taken, c.bytes, c.roomAt, c.description)
		}
	}
}

// TestProviderLimits: Gmail's documented budgets and connections stand
// unless the endpoint sets its own, and a pause names whose budget it is.
func TestProviderLimits(t *testing.T) {
	gmail := EffectiveLimits(ProfileGmail, Limits{DailyUploadBytes: 100})
	if gmail.DailyDownloadBytes != 2500*1000*1000 || gmail.DailyUploadBytes != 100 || gmail.AccountConnections != 15 || gmail.MaxMessageBytes != 35651584 {
		t.Errorf("Gmail with an upload budget of its own: %+v", gmail)
	}
	if generic := EffectiveLimits(ProfileGeneric, Limits{}); generic != (Limits{}) {
		t.Errorf("a generic server has limits %+v, want none", generic)
	}
	words := (&BudgetSpent{Direction: Download, Limit: 2500 * 1000 * 1000, Provider: "Gmail"}).Error()
	if !strings.Contains(words, "daily download budget Gmail allows over IMAP") {
		t.Errorf("words %q do not name Gmail's budget", words)
	}
	if ServerProfile(ProfileAuto, "imap.gmail.com") != ProfileGmail || ServerProfile(ProfileExchange, "imap.gmail.com") != ProfileExchange {
		t.Error("ServerProfile does not prefer the set profile, or does not tell Gmail by its host")
	}
}
