package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// WebhookStore is what sending webhooks needs of storage.
type WebhookStore interface {
	WebhookDeliveryClaim(ctx context.Context, lease time.Duration) (migration.DueDelivery, bool, error)
	WebhookDeliveryAttempted(ctx context.Context, id int64, a migration.DeliveryAttempt) error
}

// webhookTimeout bounds one attempt; the lease of a delivery under way
// outlasts it, so no other process sends it meanwhile.
const (
	webhookTimeout = 10 * time.Second
	webhookLease   = time.Minute
)

// WebhookSender calls the tasks' webhooks with the deliveries due. Any
// number of processes may run one: a delivery is leased to one sender at
// a time.
type WebhookSender struct {
	store   WebhookStore
	logger  *slog.Logger
	client  *http.Client
	backoff time.Duration
	// Poll is how often the deliveries due are looked for (Options.Poll).
	Poll time.Duration
}

// NewWebhookSender returns a sender over store, with opts' backoff.
func NewWebhookSender(store WebhookStore, logger *slog.Logger, opts Options) *WebhookSender {
	opts = opts.withDefaults()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // a proxy would dial in our stead, unchecked
	transport.DialContext = receiverDialer(opts.AllowedHosts, machineAddresses)
	client := &http.Client{Timeout: webhookTimeout, Transport: transport,
		// A receiver that moved says so in the log; the body and its
		// signature go to the address given, nowhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &WebhookSender{store: store, logger: logger, client: client, backoff: opts.Backoff, Poll: opts.Poll}
}

// SendDue sends the deliveries due, one after another, until none is due
// or ctx ends.
func (w *WebhookSender) SendDue(ctx context.Context) error {
	return sendDue(ctx, w.logger, "a webhook delivery", w.store.WebhookDeliveryClaim, w.attempt, w.store.WebhookDeliveryAttempted)
}

// sendDue claims the deliveries due on one channel, one after another,
// attempts each and records how it went, until none is due or ctx ends.
// An attempt cut short by the process stopping is not recorded: its
// lease runs out and it goes again.
func sendDue[D interface{ Owed() migration.Due }](ctx context.Context, logger *slog.Logger, what string,
	claim func(context.Context, time.Duration) (D, bool, error), attempt func(context.Context, D) migration.DeliveryAttempt,
	record func(context.Context, int64, migration.DeliveryAttempt) error) error {
	for ctx.Err() == nil {
		d, ok, err := claim(ctx, webhookLease)
		if err != nil || !ok {
			return err
		}
		result := attempt(ctx, d)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		owed := d.Owed()
		if err := record(context.WithoutCancel(ctx), owed.ID, result); err != nil {
			return err
		}
		if result.State == migration.DeliveryFailed {
			logger.Warn(what+" was given up", "task", owed.TaskID, "delivery", owed.ID, "attempts", owed.Attempts+1, "err", result.Error)
		}
	}
	return ctx.Err()
}

// attempt sends a delivery once and says what comes next.
func (w *WebhookSender) attempt(ctx context.Context, d migration.DueDelivery) migration.DeliveryAttempt {
	status, err := w.post(ctx, d)
	if err == nil {
		return migration.DeliveryAttempt{Status: status, State: migration.DeliveryDelivered, NextAttempt: time.Now()}
	}
	next := migration.DeliveryAttempt{Status: status, Error: err.Error(), State: migration.DeliveryPending,
		NextAttempt: time.Now().Add(migration.WebhookBackoff(w.backoff, d.Attempts+1))}
	if d.Attempts+1 >= migration.MaxWebhookAttempts {
		next.State = migration.DeliveryFailed
	}
	return next
}

// TestWebhook implements migration.WebhookTester: one call, sent and
// checked as a delivery's attempt is.
func (w *WebhookSender) TestWebhook(ctx context.Context, target migration.WebhookTarget, body []byte) migration.WebhookTestResult {
	start := time.Now()
	status, err := w.send(ctx, target.URL, target.Secret, string(migration.EventWebhookTest), "test", body)
	result := migration.WebhookTestResult{OK: err == nil, Status: status, Took: time.Since(start)}
	if err != nil {
		result.Error = err.Error()
	}
	return result
}

// post sends a delivery's body, signed, and returns the receiver's
// status; any status but 2xx is an error.
func (w *WebhookSender) post(ctx context.Context, d migration.DueDelivery) (int, error) {
	return w.send(ctx, d.URL, d.Secret, string(d.Kind), strconv.FormatInt(d.ID, 10), d.Body)
}

// send POSTs body to receiver, signed with secret, as the delivery (its
// id) of an event of kind.
func (w *WebhookSender) send(ctx context.Context, receiver string, secret migration.Password, kind, delivery string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, receiver, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mailmigrate-webhook")
	req.Header.Set("Mailmigrate-Event", kind)
	req.Header.Set("Mailmigrate-Delivery", delivery)
	req.Header.Set("Mailmigrate-Signature", migration.WebhookSignature(secret, time.Now(), body))
	resp, err := w.client.Do(req)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err // the URL is the task's, shown there already
		}
		return 0, unreached(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck // lets the connection be reused; the answer is the status
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}

// unreached says in words why a receiver was not reached, with what to
// look at; the network's own words stay at the end.
func unreached(err error) error {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.Is(err, ErrInternalReceiver), errors.Is(err, ErrOwnReceiver):
		return err // words of their own already
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Errorf("the receiver's host %s is not known (check the URL's host name): %w", dnsErr.Name, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing answers at the receiver's address (is it running, on that port?): %w", err)
	case errors.As(err, &certErr):
		return fmt.Errorf("the receiver's certificate is not trusted by this machine (install its issuer, or use another URL): %w", err)
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("the receiver did not answer within %s (a firewall, or a receiver too slow to take the call): %w", webhookTimeout, err)
	}
	return fmt.Errorf("the receiver could not be reached: %w", err)
}
