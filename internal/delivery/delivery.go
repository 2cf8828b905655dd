// Package delivery sends what the service owes people outside it: the
// tasks' webhook calls and mails. Each delivery is stored first, leased to
// one sender of any process at a time, and tried again with a growing
// wait; webhooks reach only the receivers the operator allows
// (docs/security.md).
package delivery

import "time"

// Options tune the senders.
type Options struct {
	// Poll is how often the process looks for deliveries due; 1 s when
	// zero.
	Poll time.Duration
	// Backoff is the wait after a delivery's first failed attempt,
	// doubling after each next; 10 s when zero.
	Backoff time.Duration
	// AllowedHosts are the webhook receivers' host names (or addresses)
	// that may be reached at an internal address; "*": any. Others are
	// called at public addresses only (receivers.go).
	AllowedHosts []string
}

func (o Options) withDefaults() Options {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Backoff <= 0 {
		o.Backoff = 10 * time.Second
	}
	return o
}
