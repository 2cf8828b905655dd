// Package event carries the news that events were committed to the live
// streams of this process: PostgreSQL's LISTEN/NOTIFY reaches every
// process on the database, so a browser connected to one process sees the
// work done by another.
package event

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channel is the NOTIFY channel that event writers signal (sql/queries/events.sql).
const Channel = "mailmigrate_events"

// WakeInterval is the least time between two wake-ups: the first commit
// after a quiet spell wakes the subscribers at once, and the commits that
// follow within it share one wake-up at its end. Under a pass of many
// small accounts, every live stream then reads the store a few times a
// second, not once per account's start and end.
const WakeInterval = 100 * time.Millisecond

// Broker wakes its subscribers whenever events may have been committed.
// A wake-up carries nothing: subscribers read what is new from the store,
// so a slow one misses no event and holds no queue.
type Broker struct {
	config   *pgx.ConnConfig // LISTEN holds a connection of its own, outside any pool
	logger   *slog.Logger
	interval time.Duration // WakeInterval
	// notified holds one pending notice: those that come while it is
	// pending, or while pace waits out the interval, are one.
	notified chan struct{}
	mu       sync.Mutex
	subs     map[chan struct{}]struct{}
}

// NewBroker returns a Broker that listens, once Run is called, on a
// connection made with config.
func NewBroker(config *pgx.ConnConfig, logger *slog.Logger) *Broker {
	return newBroker(config, logger, WakeInterval)
}

func newBroker(config *pgx.ConnConfig, logger *slog.Logger, interval time.Duration) *Broker {
	return &Broker{config: config, logger: logger, interval: interval,
		notified: make(chan struct{}, 1), subs: map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a wake-up after events are
// committed (several commits may share one), and the function that ends
// the subscription.
func (b *Broker) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}
}

// notify asks pace for a wake-up.
func (b *Broker) notify() {
	select {
	case b.notified <- struct{}{}:
	default: // one is pending already
	}
}

// pace wakes the subscribers for each notice, at most once per interval,
// until ctx ends.
func (b *Broker) pace(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.notified:
		}
		b.wakeAll()
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.interval):
		}
	}
}

func (b *Broker) wakeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// Run listens until ctx ends, reconnecting after a lost connection (and
// waking everybody then, since notifications may have been missed).
func (b *Broker) Run(ctx context.Context) {
	go b.pace(ctx)
	for ctx.Err() == nil {
		if err := b.listen(ctx); err != nil && ctx.Err() == nil {
			b.logger.Warn("event listener lost its connection; reconnecting", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		b.notify()
	}
}

func (b *Broker) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, b.config)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	b.notify() // anything committed before LISTEN took hold
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		b.notify()
	}
}
