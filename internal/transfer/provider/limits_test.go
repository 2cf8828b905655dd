package provider

import (
	"strings"
	"testing"
	"time"
)

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
