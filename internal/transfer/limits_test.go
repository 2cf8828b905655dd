package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
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
	traffic := provider.NewMemoryTraffic(func() time.Time { return now })
	job := Job{Source: src.side("ann", "pw"), Destination: dst.side("ann", "pw"), State: syncstate.NewMemoryState(),
		Traffic: traffic, Tuning: Tuning{Tries: 1}}
	job.Destination.Limits.DailyUploadBytes = 5*size + size/2
	var pauses []Throttle
	job.OnThrottled = func(th Throttle) { pauses = append(pauses, th) }

	copied := 0
	for day := 1; ; day++ {
		res, err := Migrate(context.Background(), job)
		copied += int(res.MessagesCopied)
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
	// The pauses ended the attempts, which said so: none was waited out.
	if copied != 12 || len(pauses) != 0 {
		t.Errorf("copied %d messages with %d pauses waited out, want 12 with none", copied, len(pauses))
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
