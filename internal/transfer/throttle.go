package transfer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// Throttle is a server's request to slow down, and when the account goes
// on.
type Throttle struct {
	Side  string // "source" or "destination"
	Words string // the server's answer, or which daily budget is spent
	Until time.Time
	// Budget: not the server but the mailbox's daily byte budget
	// (Limits) asks to pause.
	Budget bool
}

// PausedError ends an attempt whose pause is longer than it waits out
// itself (Tuning.LongestWait): the account goes on where it was in an
// attempt started when the pause ends.
type PausedError struct {
	Throttle
	Err error
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("paused until %s: %v", e.Until.UTC().Format(time.DateTime), e.Err)
}

func (e *PausedError) Unwrap() error { return e.Err }

// throttle is what a throttling err asks: its side, its words and the
// pause, the server's suggestion or else unhinted with a quarter of
// jitter, so that the accounts a server throttled at once do not come back
// at once.
func throttle(err error, unhinted time.Duration) Throttle {
	t := Throttle{Words: err.Error()}
	var e *imapconn.Error
	if errors.As(err, &e) {
		t.Side = e.Side
	}
	if words, ok := imapconn.ServerWords(err); ok {
		t.Words = words
	}
	var spent *provider.BudgetSpent
	if errors.As(err, &spent) {
		t.Words, t.Until, t.Budget = spent.Error(), spent.At, true
		return t
	}
	pause := unhinted + time.Duration(rand.Int64N(int64(unhinted)/4+1))
	if hinted, ok := imapconn.SuggestedPause(t.Words); ok {
		pause = hinted
	}
	t.Until = time.Now().Add(pause)
	return t
}

// pauseForThrottle waits out a throttle, telling the job first; false
// when ctx ended meanwhile.
func (r *accountAttempt) pauseForThrottle(ctx context.Context, t Throttle) bool {
	r.noteThrottle(t)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t.Until)):
		return true
	}
}

// noteThrottle tells the job of a pause and logs it.
func (r *accountAttempt) noteThrottle(t Throttle) {
	if r.job.OnThrottled != nil {
		r.job.OnThrottled(t)
	}
	r.logger.Warn("pausing", "side", t.Side, "words", t.Words, "until", t.Until, "budget", t.Budget)
}
