package imapconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/emersion/go-imap/v2"
)

// Kind classifies a failure once, so that callers decide on retries
// without reading error texts (STYLE, habit 4).
type Kind int

// The kinds of failure.
const (
	KindTransient Kind = iota // network trouble, timeouts, a server bug: retry with backoff
	KindAuth                  // wrong login or password: fail at once, never retry (lock-outs)
	KindQuota                 // the destination is full: fail the account
	KindPermanent             // anything else the server refused, e.g. one message [LIMIT] or [TOOBIG]
	KindThrottled             // the server asks to slow down: pause as long as it says, then go on
)

func (k Kind) String() string {
	switch k {
	case KindAuth:
		return "authentication failed"
	case KindQuota:
		return "over quota"
	case KindPermanent:
		return "refused"
	case KindThrottled:
		return "throttled"
	default:
		return "connection problem"
	}
}

// Retryable reports whether a later attempt may get past a failure of kind
// k: the network or the server went away, or a server kept throttling.
func (k Kind) Retryable() bool { return k == KindTransient || k == KindThrottled }

// Name is a short, stable name of k for machines, e.g. a metric label.
func (k Kind) Name() string {
	switch k {
	case KindAuth:
		return "auth"
	case KindQuota:
		return "quota"
	case KindPermanent:
		return "refused"
	case KindThrottled:
		return "throttled"
	default:
		return "transient"
	}
}

// Error is a failure on one side of a migration. Its text names the side,
// its login, host and port, and carries the server's own words; never a
// password: "source bob at imap.old.example:993: authentication failed: …".
type Error struct {
	Kind  Kind
	Side  string // "source" or "destination"
	Login string
	Host  string
	Port  int
	Err   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s at %s: %s: %v", e.Side, e.Login, net.JoinHostPort(e.Host, strconv.Itoa(e.Port)), e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err; errors this package did not classify are
// transient unless the context ended.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindTransient
}

// Classify decides the kind of an error from a server or a connection.
func Classify(err error) Kind {
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return KindPermanent // an untrusted certificate stays untrusted
	}
	var bye *byeError
	if errors.As(err, &bye) && throttleAnswer(bye.answer()) {
		return KindThrottled // a BYE that asks to come back later
	}
	var imapErr *imap.Error
	if !errors.As(err, &imapErr) {
		return KindTransient
	}
	if throttleAnswer(imapErr) {
		return KindThrottled
	}
	switch imapErr.Code {
	case imap.ResponseCodeAuthenticationFailed, imap.ResponseCodeAuthorizationFailed, imap.ResponseCodeExpired, imap.ResponseCodePrivacyRequired:
		return KindAuth
	case imap.ResponseCodeOverQuota:
		return KindQuota
	case imap.ResponseCodeServerBug:
		return KindTransient
	}
	if imapErr.Type == imap.StatusResponseTypeBye {
		return KindTransient
	}
	return KindPermanent
}

func (s *Side) Fail(name string, kind Kind, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &Error{Kind: kind, Side: name, Login: s.Login, Host: s.Host, Port: s.Port, Err: err}
}

// byeError is a connection that ended after the server's BYE (RFC 9051
// §7.1.5), with the BYE's words: go-imap reports only the end of the
// stream, and the server's reason would be lost.
type byeError struct {
	text string
	err  error
}

func (e *byeError) Error() string {
	return fmt.Sprintf("the server ended the session: %q (%v)", e.text, e.err)
}

func (e *byeError) Unwrap() error { return e.err }

// answer is the BYE as a status response, its code read from a leading
// "[CODE]" (RFC 9051 §7.1: resp-text-code).
func (e *byeError) answer() *imap.Error {
	answer := &imap.Error{Type: imap.StatusResponseTypeBye, Text: e.text}
	if rest, ok := strings.CutPrefix(e.text, "["); ok {
		if code, text, ok := strings.Cut(rest, "]"); ok {
			fields := strings.Fields(code)
			if len(fields) > 0 {
				answer.Code, answer.Text = imap.ResponseCode(strings.ToUpper(fields[0])), strings.TrimSpace(text)
			}
		}
	}
	return answer
}

// TokenExpired reports whether err is a session the server ended because
// its access token expired, as Exchange Online does: "* BYE Session
// invalidated - AccessTokenExpired". A new login with a fresh token goes
// on; it is not a fault of the account or of the network.
func TokenExpired(err error) bool {
	var bye *byeError
	if !errors.As(err, &bye) {
		return false
	}
	text := strings.ToLower(bye.text)
	return strings.Contains(text, "accesstokenexpired") || strings.Contains(text, "token expired") || strings.Contains(text, "token has expired")
}

// sideOf is the side a connection talks to, for its errors.
type sideOf struct {
	side *Side
	name string // "source" or "destination"
}

// Fail is side.Fail for this connection's side.
func (c sideOf) Fail(kind Kind, err error) error { return c.side.Fail(c.name, kind, err) }

// Failed is fail with err's own kind.
func (c sideOf) Failed(err error) error { return c.Fail(Classify(err), err) }
