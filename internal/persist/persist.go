// Package persist stores what work produced when the database is briefly
// out of reach: the work is done, and must be neither redone (logins
// again) nor lost (a task left testing, a refresh token a person signed
// in for).
package persist

import (
	"context"
	"log/slog"
	"time"
)

// Delays space the tries of Outcome: half a minute in all.
var Delays = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}

// Outcome calls store until it succeeds or Delays run out, and returns
// its last error. It runs even when ctx has ended: the caller's work is
// done.
func Outcome(ctx context.Context, logger *slog.Logger, store func(context.Context) error) error {
	ctx = context.WithoutCancel(ctx)
	err := store(ctx)
	for _, delay := range Delays {
		if err == nil {
			return nil
		}
		logger.Warn("could not store a job's outcome; trying again", "err", err, "wait", delay)
		time.Sleep(delay)
		err = store(ctx)
	}
	return err
}
