package worker

import (
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/secret"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// The servers' words reach the account's error, its events, the report,
// mails, webhooks and logs. A server that echoes a command (or a token
// endpoint that echoes the request) must not carry a secret there: every
// outcome leaves a job scrubbed of the passwords it logged in with and of
// whatever is shaped like a credential (secret.Scrub).

// knownSecrets are the passwords (or master passwords) sides log in with.
func knownSecrets(sides ...imapconn.Side) []string {
	var known []string
	for _, s := range sides {
		if s.Password != "" {
			known = append(known, s.Password)
		}
	}
	return known
}

// scrubAttemptOutcome scrubs an attempt's outcome of known secrets.
func scrubAttemptOutcome(o *migration.AttemptOutcome, known []string) {
	o.LastError = secret.Scrub(o.LastError, known...)
	scrubEvents(o.Events, known)
	scrubEvents(o.Pending, known)
	if s := o.Scripts; s != nil {
		s.Error = secret.Scrub(s.Error, known...)
		for _, list := range [][]migration.ScriptProblem{s.Refused, s.Unread} {
			for i := range list {
				list[i].Reason = secret.Scrub(list[i].Reason, known...)
			}
		}
	}
}

// scrubTestOutcome scrubs a login test's outcome of known secrets.
func scrubTestOutcome(o *migration.AccountTestOutcome, known []string) {
	o.SourceError = secret.Scrub(o.SourceError, known...)
	o.DestinationError = secret.Scrub(o.DestinationError, known...)
	scrubEvents(o.Events, known)
}

func scrubEvents(events []migration.Event, known []string) {
	for i := range events {
		events[i].Error = secret.Scrub(events[i].Error, known...)
		events[i].Message = secret.Scrub(events[i].Message, known...)
	}
}
