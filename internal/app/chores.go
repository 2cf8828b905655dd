package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A chore is work a process does on its own, every period: take over the
// accounts of a dead process, start the passes schedules have due, send
// the webhook calls and mails due, prune old records. Every process runs
// every chore; each is a statement that is safe beside the same chore in
// another process (leases, SKIP LOCKED), so none needs a leader.
//
// They are not River periodic jobs: one every second or two would be a
// job row each time, thousands a day for work that is a single query.
type chore struct {
	name   string // what the logs say could not be done: "send the webhook calls due"
	period time.Duration
	atOnce bool // also run as the process starts, not only a period later
	do     func(context.Context) error
}

// scheduler runs chores, each every its period, on one timer. A chore
// that takes longer than its period is not started again until it ends,
// and a slow chore delays no other.
type scheduler struct {
	chores  []chore
	logger  *slog.Logger
	running sync.WaitGroup
}

// run starts each chore when due until ctx ends, then waits for those
// still running.
func (s *scheduler) run(ctx context.Context) {
	defer s.running.Wait()
	now := time.Now()
	due := make([]time.Time, len(s.chores))
	busy := make([]bool, len(s.chores))
	ended := make(chan int, len(s.chores))
	for i, c := range s.chores {
		due[i] = now.Add(c.period)
		if c.atOnce {
			due[i] = now
		}
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		now := time.Now()
		next := now.Add(time.Hour)
		for i, c := range s.chores {
			if !busy[i] && !now.Before(due[i]) {
				busy[i] = true
				due[i] = now.Add(c.period)
				s.running.Go(func() {
					defer func() { ended <- i }()
					if err := c.do(ctx); err != nil && ctx.Err() == nil {
						s.logger.Warn("could not "+c.name, "err", err)
					}
				})
			}
			if !busy[i] && due[i].Before(next) {
				next = due[i]
			}
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case i := <-ended:
			busy[i] = false
		case <-timer.C:
		}
	}
}
