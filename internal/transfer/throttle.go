package transfer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"

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

// PausedError ends a run whose pause is longer than it waits out itself
// (Tuning.LongestWait): the account goes on where it was in a run
// started when the pause ends.
type PausedError struct {
	Throttle
	Err error
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("paused until %s: %v", e.Until.UTC().Format(time.DateTime), e.Err)
}

func (e *PausedError) Unwrap() error { return e.Err }

// suggestedBackoff reads Exchange Online's hint, "Request is throttled.
// Suggested Backoff Time: 30000 milliseconds".
var suggestedBackoff = regexp.MustCompile(`(?i)suggested backoff time:\s*(\d+)\s*milli`)

// responseCodeThrottled is the response code some servers give a client
// that goes too fast; no RFC names it.
const responseCodeThrottled imap.ResponseCode = "THROTTLED"

// slowDown reads a [LIMIT] answer (RFC 5530) that is about the pace, not
// the message: "Too many commands, slow down", a rate limit, try later.
// A [LIMIT] about the message (too many flags, too large) stays a
// refusal.
var slowDown = regexp.MustCompile(`(?i)slow down|too many (commands|requests|connections)|rate limit|try (again )?later`)

// throttleAnswer reports whether the server asks to slow down rather than
// refuses: Exchange Online's suggested backoff, [INUSE] (RFC 5530: busy,
// try later), [UNAVAILABLE] (RFC 5530: a subsystem is down for now),
// [THROTTLED], a [LIMIT] about the pace, Gmail's "Account exceeded
// command or bandwidth limits" and "Too many simultaneous connections".
// The account pauses and goes on where it was; no message is at fault,
// and no attempt is used up.
func throttleAnswer(e *imap.Error) bool {
	text := strings.ToLower(e.Text)
	switch e.Code {
	case imap.ResponseCodeInUse, imap.ResponseCodeUnavailable, responseCodeThrottled:
		return true
	case imap.ResponseCodeLimit:
		return slowDown.MatchString(e.Text)
	}
	return suggestedBackoff.MatchString(e.Text) ||
		strings.Contains(text, "bandwidth limits") || strings.Contains(text, "too many simultaneous connections")
}

// maxHintedPause caps a server's suggestion: a wrong one must not stall an
// account for days.
const maxHintedPause = time.Hour

// throttle is what a throttling err asks: its side, its words and the
// pause, the server's suggestion or else unhinted with a quarter of
// jitter, so that the accounts a server throttled at once do not come back
// at once.
func throttle(err error, unhinted time.Duration) Throttle {
	t := Throttle{Words: err.Error()}
	var e *Error
	if errors.As(err, &e) {
		t.Side = e.Side
	}
	var imapErr *imap.Error
	var bye *byeError
	switch {
	case errors.As(err, &imapErr):
		t.Words = imapErr.Text
	case errors.As(err, &bye):
		t.Words = bye.answer().Text
	}
	var spent *provider.BudgetSpent
	if errors.As(err, &spent) {
		t.Words, t.Until, t.Budget = spent.Error(), spent.At, true
		return t
	}
	pause := unhinted + time.Duration(rand.Int64N(int64(unhinted)/4+1))
	if m := suggestedBackoff.FindStringSubmatch(t.Words); m != nil {
		if ms, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			pause = min(time.Duration(ms)*time.Millisecond, maxHintedPause)
		}
	}
	t.Until = time.Now().Add(pause)
	return t
}

// pauseForThrottle waits out a throttle, telling the job first; false
// when ctx ended meanwhile.
func (r *accountRun) pauseForThrottle(ctx context.Context, t Throttle) bool {
	r.noteThrottle(t)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t.Until)):
		return true
	}
}

// noteThrottle tells the job of a pause and logs it.
func (r *accountRun) noteThrottle(t Throttle) {
	if r.job.OnThrottled != nil {
		r.job.OnThrottled(t)
	}
	r.logger.Warn("pausing", "side", t.Side, "words", t.Words, "until", t.Until, "budget", t.Budget)
}
