package provider

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Limits are what a server takes of one mailbox, or of everyone, where
// it does not announce it: an endpoint's own, or its profile's (zero
// fields take the profile's: EffectiveLimits).
type Limits struct {
	// MaxMessageBytes is the largest message a destination takes; an
	// APPENDLIMIT the server announces (RFC 7889) wins.
	MaxMessageBytes int64
	// DailyDownloadBytes and DailyUploadBytes bound what one mailbox
	// reads and writes over any 24 hours (transfer.Job.Traffic counts it): beyond,
	// the account pauses until the oldest bytes of the day leave the
	// count, instead of the provider locking the mailbox.
	DailyDownloadBytes, DailyUploadBytes int64
	// Connections bounds the connections to the server of every account
	// together, and AccountConnections those of one mailbox (admission
	// holds both across processes).
	Connections, AccountConnections int
}

// Or fills the zero fields of l from def.
func (l Limits) Or(def Limits) Limits {
	return Limits{
		MaxMessageBytes:    cmp.Or(l.MaxMessageBytes, def.MaxMessageBytes),
		DailyDownloadBytes: cmp.Or(l.DailyDownloadBytes, def.DailyDownloadBytes),
		DailyUploadBytes:   cmp.Or(l.DailyUploadBytes, def.DailyUploadBytes),
		Connections:        cmp.Or(l.Connections, def.Connections),
		AccountConnections: cmp.Or(l.AccountConnections, def.AccountConnections),
	}
}

// EffectiveLimits are the limits of a server with profile p (not
// ProfileAuto) and its endpoint's own.
func EffectiveLimits(p Profile, own Limits) Limits { return own.Or(providers[p].Limits) }

// Direction is which way a mailbox's bytes go, as its server counts them.
type Direction string

// The directions: a source's messages are downloaded, a destination's
// uploaded.
const (
	Download Direction = "download"
	Upload   Direction = "upload"
)

// Mailbox names one account on one server, as the server's limits count
// it: host:port and login, in lower case.
type Mailbox struct {
	Server, Login string
}

// TrafficLedger counts the bytes each mailbox moved over the last day,
// for the daily budgets, across every attempt and process that shares it.
type TrafficLedger interface {
	// Spend adds the bytes of the longest run of messages from the
	// first, of sizes, that mailbox moves in direction while the last 24
	// hours' total stays within limit (see Take), and says how many that
	// is; when none, it also says when the first will have room.
	Spend(ctx context.Context, mailbox Mailbox, direction Direction, sizes []int64, limit int64) (taken int, roomAt time.Time, err error)
}

// TrafficHour is what a mailbox moved in the hour from Hour on.
type TrafficHour struct {
	Hour  time.Time
	Bytes int64
}

// TrafficWindow is how long a daily budget counts bytes.
const TrafficWindow = 24 * time.Hour

// Take decides a Spend from the mailbox's hours of the last day, oldest
// first: how many of the messages of sizes, from the first, stay within
// limit, and their bytes; when none, when the first will have room (an
// hour leaves the count whole, a day after its end). A message larger
// than the whole budget goes when the day's count is empty: it would
// never go otherwise.
func Take(hours []TrafficHour, sizes []int64, limit int64) (taken int, bytes int64, roomAt time.Time) {
	var total int64
	for _, h := range hours {
		total += h.Bytes
	}
	for _, n := range sizes {
		if total+bytes+n > limit && total+bytes > 0 {
			break
		}
		taken++
		bytes += n
	}
	if taken > 0 || len(sizes) == 0 {
		return taken, bytes, time.Time{}
	}
	for _, h := range hours {
		total -= h.Bytes
		if total+sizes[0] <= limit || total == 0 {
			return 0, 0, h.Hour.Add(time.Hour + TrafficWindow)
		}
	}
	return 0, 0, time.Time{} // not reached: total reaches 0
}

// MemoryTraffic is a TrafficLedger of one process, for the engine alone
// (tests, a single migration); the service's is in PostgreSQL.
type MemoryTraffic struct {
	mu    sync.Mutex
	now   func() time.Time
	hours map[trafficKey][]TrafficHour
}

type trafficKey struct {
	mailbox   Mailbox
	direction Direction
}

// NewMemoryTraffic returns an empty ledger reading the time from now
// (time.Now when nil).
func NewMemoryTraffic(now func() time.Time) *MemoryTraffic {
	if now == nil {
		now = time.Now
	}
	return &MemoryTraffic{now: now, hours: map[trafficKey][]TrafficHour{}}
}

// Spend implements TrafficLedger.
func (m *MemoryTraffic) Spend(_ context.Context, mailbox Mailbox, direction Direction, sizes []int64, limit int64) (int, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now, key := m.now(), trafficKey{mailbox, direction}
	hour := now.Truncate(time.Hour)
	hours := slices.DeleteFunc(m.hours[key], func(h TrafficHour) bool { return !h.Hour.After(now.Add(-TrafficWindow - time.Hour)) })
	m.hours[key] = hours
	taken, bytes, roomAt := Take(hours, sizes, limit)
	switch {
	case taken == 0:
	case len(hours) > 0 && hours[len(hours)-1].Hour.Equal(hour):
		hours[len(hours)-1].Bytes += bytes
	default:
		m.hours[key] = append(hours, TrafficHour{Hour: hour, Bytes: bytes})
	}
	return taken, roomAt, nil
}

// BudgetSpent says that a mailbox's daily byte budget has no room for the
// next messages: the account pauses until At.
type BudgetSpent struct {
	Direction Direction
	Limit     int64
	Provider  string // whose limit it is, "" for the endpoint's own
	At        time.Time
}

func (e *BudgetSpent) Error() string {
	whose := "the endpoint's daily " + string(e.Direction) + " budget"
	if e.Provider != "" {
		whose = "the daily " + string(e.Direction) + " budget " + e.Provider + " allows over IMAP"
	}
	return fmt.Sprintf("%s (%d bytes over 24 hours) is spent", whose, e.Limit)
}
