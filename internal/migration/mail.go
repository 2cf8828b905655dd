package migration

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"time"
)

// MailKinds are the events a task mails its recipients about, with the
// summary and the CSV report: a pass ends, or the final pass does. A
// failed account is told by its pass's end, not a mail of its own.
var MailKinds = []EventKind{EventRunFinished, EventRunCanceled, EventFinalVerified, EventFinalUnverified}

// MaxMailRecipients bounds a task's recipients.
const MaxMailRecipients = 20

// ErrNoMailServer refuses recipients while the service has no SMTP
// server to send through.
var ErrNoMailServer = conflict("no SMTP server is configured: start the service with MAILMIGRATE_SMTP_URL (see docs/operations.md)")

// MailSettings are who a task mails, and whether the service can.
type MailSettings struct {
	To        []string
	ServerSet bool // an SMTP server is configured
}

// NormalizeRecipients checks a task's recipients: addresses, each once.
func NormalizeRecipients(to []string) ([]string, error) {
	if len(to) == 0 {
		return nil, invalid("to", "must name at least one address")
	}
	if len(to) > MaxMailRecipients {
		return nil, invalid("to", "at most %d addresses", MaxMailRecipients)
	}
	out := make([]string, 0, len(to))
	seen := map[string]bool{}
	for _, raw := range to {
		addr, err := mail.ParseAddress(strings.TrimSpace(raw))
		if err != nil || addr.Name != "" || len(addr.Address) > 254 {
			return nil, invalid("to", "%q is not a mail address such as it@acme.example", raw)
		}
		if key := strings.ToLower(addr.Address); !seen[key] {
			seen[key] = true
			out = append(out, addr.Address)
		}
	}
	return out, nil
}

// DueMail is a mail leased to a sender: the event it tells of (as a
// webhook's body) and its recipients.
type DueMail struct {
	Due
	Event WebhookEvent
	To    []string
}

// MailStore keeps a task's recipients and the mails it owes.
type MailStore interface {
	// MailSet stores a task's recipients (none: it mails no one);
	// ErrNotFound for a missing task.
	MailSet(ctx context.Context, taskID int64, to []string) error
	MailGet(ctx context.Context, taskID int64) ([]string, error)
	// MailDeliveries is the mail log, newest first.
	MailDeliveries(ctx context.Context, taskID int64) ([]WebhookDelivery, error)
}

// SetMail has a task mail to when a pass ends; the service must have an
// SMTP server.
func (s *Service) SetMail(ctx context.Context, taskID int64, to []string) (MailSettings, error) {
	to, err := NormalizeRecipients(to)
	if err != nil {
		return MailSettings{}, err
	}
	if !s.MailServer {
		return MailSettings{}, ErrNoMailServer
	}
	if err := s.store.MailSet(ctx, taskID, to); err != nil {
		return MailSettings{}, err
	}
	return MailSettings{To: to, ServerSet: true}, nil
}

// Mail returns who a task mails.
func (s *Service) Mail(ctx context.Context, taskID int64) (MailSettings, error) {
	to, err := s.store.MailGet(ctx, taskID)
	return MailSettings{To: to, ServerSet: s.MailServer}, err
}

// RemoveMail stops a task's mails; those still due are given up.
func (s *Service) RemoveMail(ctx context.Context, taskID int64) error {
	return s.store.MailSet(ctx, taskID, []string{})
}

// MailDeliveries is a task's mail log, newest first.
func (s *Service) MailDeliveries(ctx context.Context, taskID int64) ([]WebhookDelivery, error) {
	return s.store.MailDeliveries(ctx, taskID)
}

// MailSummary is the subject and the text of a mail about event e of
// task, where the cut-over stands in l.
func MailSummary(task Task, e WebhookEvent, l Lifecycle) (subject, text string) {
	name := task.Name
	if name == "" {
		name = fmt.Sprintf("task %d", task.ID)
	}
	subject = fmt.Sprintf("[mailmigrate] %s: %s", name, e.Message)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", e.Message)
	fmt.Fprintf(&b, "Task:       %s (id %d), %s\n", name, task.ID, strings.ReplaceAll(string(task.State), "_", " "))
	fmt.Fprintf(&b, "Cut-over:   %s\n", l.Words)
	var states []string
	for _, st := range AccountStates {
		if n := task.Accounts.ByState[st]; n > 0 {
			states = append(states, fmt.Sprintf("%d %s", n, strings.ReplaceAll(string(st), "_", " ")))
		}
	}
	fmt.Fprintf(&b, "Accounts:   %d (%s)\n", task.Accounts.Total, strings.Join(states, ", "))
	t := task.Totals
	fmt.Fprintf(&b, "Messages:   %d copied, %d skipped, %d failed; %.1f MB copied\n", t.MessagesCopied, t.MessagesSkipped, t.MessagesFailed, float64(t.BytesCopied)/1e6)
	fmt.Fprintf(&b, "Event:      %s at %s\n\n", e.Kind, e.Time.Format(time.RFC3339))
	b.WriteString("The report of every account is attached (CSV).\n")
	return subject, b.String()
}
