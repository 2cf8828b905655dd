package delivery

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// MailServer is the SMTP server a service sends its mails through.
type MailServer struct {
	// URL is smtp://host[:587] (STARTTLS, required), smtps://host[:465]
	// (TLS from the start) or smtp+plain://host[:25] (no TLS: a relay on
	// loopback or a trusted network); a user in it logs in with Password.
	URL      *url.URL
	Password string
	From     string // the sender's address
}

// ParseMailServer reads an SMTP server's settings: its URL, its password
// (from elsewhere than the URL, which logs may show), and the sender.
func ParseMailServer(raw, password, from string) (MailServer, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return MailServer{}, fmt.Errorf("SMTP URL %q: want smtp://[user@]host[:port], smtps://… or smtp+plain://…", raw)
	}
	switch u.Scheme {
	case "smtp", "smtps", "smtp+plain":
	default:
		return MailServer{}, fmt.Errorf("SMTP URL %q: the scheme must be smtp (STARTTLS), smtps (TLS) or smtp+plain (no TLS)", raw)
	}
	if _, set := u.User.Password(); set {
		return MailServer{}, errors.New("SMTP URL: give the password in MAILMIGRATE_SMTP_PASSWORD or its file, not in the URL")
	}
	if from == "" {
		return MailServer{}, errors.New("SMTP: the sender's address (MAILMIGRATE_SMTP_FROM) is missing")
	}
	if _, err := migration.NormalizeRecipients([]string{from}); err != nil {
		return MailServer{}, fmt.Errorf("SMTP sender %q is not a mail address", from)
	}
	return MailServer{URL: u, Password: password, From: from}, nil
}

// Address is the server's host:port, with the scheme's port by default.
func (m MailServer) Address() string {
	port := m.URL.Port()
	if port == "" {
		port = map[string]string{"smtp": "587", "smtps": "465", "smtp+plain": "25"}[m.URL.Scheme]
	}
	return net.JoinHostPort(m.URL.Hostname(), port)
}

// mailTimeout bounds a whole sending, from the dial to QUIT.
const mailTimeout = time.Minute

// send hands msg for to to the server.
func (m MailServer) send(ctx context.Context, to []string, msg []byte) (err error) {
	defer func() { err = m.scrubbed(err) }()
	host := m.URL.Hostname()
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	var conn net.Conn
	if m.URL.Scheme == "smtps" {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}}).DialContext(ctx, "tcp", m.Address())
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", m.Address())
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(mailTimeout)) //nolint:errcheck // a deadline that cannot be set leaves the dial's
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return err
	}
	defer c.Close()
	if m.URL.Scheme == "smtp" {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return errors.New("the SMTP server offers no STARTTLS (use smtp+plain:// to send without TLS)")
		}
		if err := c.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return err
		}
	}
	if user := m.URL.User.Username(); user != "" {
		if err := c.Auth(smtp.PlainAuth("", user, m.Password, host)); err != nil {
			return err
		}
	}
	if err := c.Mail(m.From); err != nil {
		return err
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// MailStore is what sending mails needs of storage.
type MailStore interface {
	MailDeliveryClaim(ctx context.Context, lease time.Duration) (migration.DueMail, bool, error)
	WebhookDeliveryAttempted(ctx context.Context, id int64, a migration.DeliveryAttempt) error
}

// MailContent reads what a mail says: the task, where its cut-over
// stands, and its report (a *migration.Service).
type MailContent interface {
	Task(ctx context.Context, id int64) (migration.Task, error)
	Lifecycle(ctx context.Context, taskID int64) (migration.Lifecycle, error)
	WriteTaskReport(ctx context.Context, taskID int64, w io.Writer) error
}

// MailSender mails the tasks' recipients the summaries due, with the
// report attached. Any number of processes may run one: a mail is leased
// to one sender at a time.
type MailSender struct {
	store   MailStore
	content MailContent
	server  MailServer
	logger  *slog.Logger
	backoff time.Duration
	// Poll is how often the mails due are looked for.
	Poll time.Duration
}

// NewMailSender returns a sender through server, with opts' poll and
// backoff (those of the webhooks).
func NewMailSender(store MailStore, content MailContent, server MailServer, logger *slog.Logger, opts Options) *MailSender {
	opts = opts.withDefaults()
	return &MailSender{store: store, content: content, server: server, logger: logger, backoff: opts.Backoff, Poll: opts.Poll}
}

// SendDue sends the mails due, one after another, until none is due or
// ctx ends.
func (m *MailSender) SendDue(ctx context.Context) error {
	return sendDue(ctx, m.logger, "a mail", m.store.MailDeliveryClaim, m.attempt, m.store.WebhookDeliveryAttempted)
}

// attempt builds and sends a mail once and says what comes next.
func (m *MailSender) attempt(ctx context.Context, d migration.DueMail) migration.DeliveryAttempt {
	msg, err := m.message(ctx, d)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, mailTimeout)
		err = m.server.send(ctx, d.To, msg)
		cancel()
	}
	if err == nil {
		return migration.DeliveryAttempt{State: migration.DeliveryDelivered, NextAttempt: time.Now()}
	}
	next := migration.DeliveryAttempt{Error: err.Error(), State: migration.DeliveryPending,
		NextAttempt: time.Now().Add(migration.WebhookBackoff(m.backoff, d.Attempts+1))}
	var reply *textproto.Error
	if errors.As(err, &reply) {
		next.Status = reply.Code
		if reply.Code >= 500 { // the server will not take it: no use trying again
			next.State = migration.DeliveryFailed
		}
	}
	if errors.Is(err, migration.ErrNotFound) || d.Attempts+1 >= migration.MaxWebhookAttempts {
		next.State = migration.DeliveryFailed
	}
	return next
}

// message is the mail about d: the summary as text and the report as a
// CSV attachment (RFC 2045, 2046, 2183).
func (m *MailSender) message(ctx context.Context, d migration.DueMail) ([]byte, error) {
	task, err := m.content.Task(ctx, d.TaskID)
	if err != nil {
		return nil, err
	}
	lifecycle, err := m.content.Lifecycle(ctx, d.TaskID)
	if err != nil {
		return nil, err
	}
	var report bytes.Buffer
	if err := m.content.WriteTaskReport(ctx, d.TaskID, &report); err != nil {
		return nil, err
	}
	subject, text := migration.MailSummary(task, d.Event, lifecycle)
	var id [12]byte
	rand.Read(id[:]) //nolint:errcheck // never fails (crypto/rand)
	var b bytes.Buffer
	parts := multipart.NewWriter(&b)
	for _, h := range [][2]string{
		{"From", m.server.From}, {"To", strings.Join(d.To, ", ")}, {"Subject", mime.QEncoding.Encode("utf-8", subject)},
		{"Date", time.Now().Format(time.RFC1123Z)}, {"Message-ID", "<" + hex.EncodeToString(id[:]) + "@mailmigrate>"},
		{"MIME-Version", "1.0"}, {"Content-Type", "multipart/mixed; boundary=" + parts.Boundary()},
		{"Auto-Submitted", "auto-generated"}, // RFC 3834: no replies from robots
	} {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	b.WriteString("\r\n")
	body, err := parts.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Transfer-Encoding": {"quoted-printable"}})
	if err != nil {
		return nil, err
	}
	qp := quotedprintable.NewWriter(body)
	qp.Write([]byte(strings.ReplaceAll(text, "\n", "\r\n"))) //nolint:errcheck // writes to memory
	qp.Close()                                               //nolint:errcheck // writes to memory
	name := fmt.Sprintf("task-%d-report.csv", d.TaskID)
	attachment, err := parts.CreatePart(textproto.MIMEHeader{"Content-Type": {`text/csv; charset=utf-8; name="` + name + `"`},
		"Content-Disposition": {`attachment; filename="` + name + `"`}, "Content-Transfer-Encoding": {"base64"}})
	if err != nil {
		return nil, err
	}
	encoded := base64.StdEncoding.EncodeToString(report.Bytes())
	for len(encoded) > 76 {
		fmt.Fprintf(attachment, "%s\r\n", encoded[:76])
		encoded = encoded[76:]
	}
	fmt.Fprintf(attachment, "%s\r\n", encoded)
	if err := parts.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scrubbed is err without the server's password in its words, as it is
// or as AUTH PLAIN sends it (base64): a reply may quote what it was sent.
// An SMTP reply stays one, its code kept.
func (m MailServer) scrubbed(err error) error {
	if err == nil || m.Password == "" {
		return err
	}
	plain := base64.StdEncoding.EncodeToString([]byte("\x00" + m.URL.User.Username() + "\x00" + m.Password))
	words := secret.Scrub(err.Error(), m.Password, plain)
	if words == err.Error() {
		return err
	}
	var reply *textproto.Error
	if errors.As(err, &reply) {
		return &textproto.Error{Code: reply.Code, Msg: secret.Scrub(reply.Msg, m.Password, plain)}
	}
	return errors.New(words)
}
