package migration

import (
	"fmt"
	"time"
)

// LoginFailureLimit keeps the failed logins the service causes on one
// server host within Max per Window: servers penalise an address that
// keeps failing (Dovecot delays each login from it, fail2ban bans it,
// with 5 failures in 10 minutes by default). Login tests on a host at its
// limit wait until its oldest failure leaves the window. Max 0 means no
// limit, for a server that trusts the migration host.
type LoginFailureLimit struct {
	Max    int
	Window time.Duration
}

// DefaultLoginFailureLimit stays under fail2ban's default (5 in 10 min).
var DefaultLoginFailureLimit = LoginFailureLimit{Max: 4, Window: 10 * time.Minute}

// Wait is how long a login test must wait on a host that refused
// failures logins within the window, the oldest at oldest: 0 when it may
// log in now.
func (l LoginFailureLimit) Wait(failures int, oldest, now time.Time) time.Duration {
	if l.Max <= 0 || failures < l.Max {
		return 0
	}
	return max(oldest.Add(l.Window).Sub(now), time.Second)
}

// WaitWords say why a login test waits, for its event: the host, the
// limit, and when it goes on.
func (l LoginFailureLimit) WaitWords(host string, until time.Time) string {
	return fmt.Sprintf("%s refused %d logins within %s, the limit that keeps the server's lock-out (fail2ban) off this host: "+
		"the login test waits until %s; raise MAILMIGRATE_MAX_FAILED_LOGINS if the server trusts this host",
		host, l.Max, l.Window, until.UTC().Format(time.TimeOnly))
}

// SlowRefusal is how long a refused login takes before the wait is a
// server's penalty rather than its answer: Dovecot delays each failed
// login (auth_failure_delay, 2 s) and, from an address that keeps
// failing, every login, good ones too (up to 15 s).
const SlowRefusal = 5 * time.Second

// SlowRefusalWords say, after a refusal that took took, that the server
// penalises failures; "" for a prompt refusal.
func SlowRefusalWords(took time.Duration) string {
	if took < SlowRefusal {
		return ""
	}
	return fmt.Sprintf(" (the server took %s to refuse: it delays logins after failures, so a test of many wrong passwords "+
		"takes long; the accounts whose logins work can run meanwhile)", took.Round(time.Second))
}
