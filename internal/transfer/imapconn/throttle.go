package imapconn

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
)

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

// ServerWords are the words of the server's answer that err carries: the
// text of its NO, BAD or BYE; false when err holds none.
func ServerWords(err error) (string, bool) {
	var imapErr *imap.Error
	var bye *byeError
	switch {
	case errors.As(err, &imapErr):
		return imapErr.Text, true
	case errors.As(err, &bye):
		return bye.answer().Text, true
	}
	return "", false
}

// SuggestedPause is the pause a server's words suggest, as Exchange
// Online's "Suggested Backoff Time: 30000 milliseconds" does, at most
// maxHintedPause; false when they suggest none.
func SuggestedPause(words string) (time.Duration, bool) {
	m := suggestedBackoff.FindStringSubmatch(words)
	if m == nil {
		return 0, false
	}
	ms, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return min(time.Duration(ms)*time.Millisecond, maxHintedPause), true
}
