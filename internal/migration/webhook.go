package migration

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A task's webhook is called with a signed JSON body when one of
// WebhookKinds happens in it: a pass ends (finished or canceled), an
// account fails, or the final pass ends verified or not.
var WebhookKinds = []EventKind{EventRunFinished, EventRunCanceled, EventAccountFailed, EventFinalVerified, EventFinalUnverified}

// Limits of a webhook's settings.
const (
	MinWebhookSecretBytes = 16
	MaxWebhookSecretBytes = 256
	// MaxWebhookAttempts is how often a delivery is tried before it is
	// given up: with WebhookBackoff's doubling from 10 s, over about 40
	// minutes.
	MaxWebhookAttempts = 8
	// MaxWebhookDeliveries is the longest delivery log a request gets.
	MaxWebhookDeliveries = 500
)

// Webhook is a task's webhook. Secret is written, never shown: on input an
// empty one keeps the stored secret; SecretSet says one is stored.
type Webhook struct {
	URL       string
	Secret    Password
	SecretSet bool
	// Calls is how often it is called; "" takes WebhookPerPass.
	Calls WebhookCalls
}

// WebhookCalls says how often a task's webhook is called.
type WebhookCalls string

// The policies: once per pass (its end lists the accounts that did not
// complete), or that and once per failed account as well.
const (
	WebhookPerPass    WebhookCalls = "per_pass"
	WebhookPerAccount WebhookCalls = "per_account"
)

// WebhookCallPolicies are every WebhookCalls, in the order the API lists
// them.
var WebhookCallPolicies = []WebhookCalls{WebhookPerPass, WebhookPerAccount}

// WebhookPassEnds are the kinds whose call lists the pass's accounts that
// did not complete (NotCompletedStates).
var WebhookPassEnds = []EventKind{EventRunFinished, EventRunCanceled, EventFinalVerified, EventFinalUnverified}

// NotCompletedStates are the states of an account whose pass left it
// short: a pass's end lists them.
var NotCompletedStates = []AccountState{AccountCompletedWithErrors, AccountFailed, AccountCanceled}

// Normalize checks a webhook's settings before they are stored; hasSecret
// says whether the task has a secret already.
func (w *Webhook) Normalize(hasSecret bool) error {
	w.URL = strings.TrimSpace(w.URL)
	if w.Calls == "" {
		w.Calls = WebhookPerPass
	}
	switch u, ok := webURL(w.URL); {
	case !slices.Contains(WebhookCallPolicies, w.Calls):
		return invalid("calls", "must be per_pass|per_account")
	case !ok:
		return invalid("url", "must be an absolute http or https URL of at most %d bytes", MaxURLBytes)
	case u.User != nil:
		// GET /webhook shows the URL: credentials in it would be shown to
		// whoever reads the task. The signature authenticates the calls.
		return invalid("url", "must not carry a user or password: the receiver checks the signature made with the secret instead")
	case w.Secret == "" && !hasSecret:
		return invalid("secret", "must be given: the bodies are signed with it")
	case w.Secret != "" && (len(w.Secret) < MinWebhookSecretBytes || len(w.Secret) > MaxWebhookSecretBytes || !plainText(string(w.Secret), MaxWebhookSecretBytes)):
		return invalid("secret", "must be %d to %d bytes without control characters", MinWebhookSecretBytes, MaxWebhookSecretBytes)
	}
	return nil
}

// WebhookBody is what a webhook is sent, as JSON: the event, as the API's
// event log shows it, and its task, which storage fills in from the task
// as it is when the event happens.
type WebhookBody struct {
	Task  *WebhookTask `json:"task,omitempty"`
	Event WebhookEvent `json:"event"`
	// AccountsNotCompleted are, at the end of a pass (WebhookPassEnds),
	// its accounts in NotCompletedStates: the first 500 of them, and how
	// many in all. Storage fills them in with the task.
	AccountsNotCompleted      []WebhookAccount `json:"accounts_not_completed,omitempty"`
	AccountsNotCompletedTotal int              `json:"accounts_not_completed_total,omitempty"`
}

// WebhookAccount is an account a pass left short, in a webhook's body.
type WebhookAccount struct {
	AccountID int64        `json:"account_id"`
	Login     string       `json:"login"`
	State     AccountState `json:"state"`
	Error     string       `json:"error"`
}

// WebhookTask names the task of a webhook's event.
type WebhookTask struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// WebhookEvent is an event in a webhook's body.
type WebhookEvent struct {
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Kind      EventKind `json:"kind"`
	TaskID    int64     `json:"task_id"`
	AccountID int64     `json:"account_id,omitempty"`
	Login     string    `json:"login,omitempty"`
	Error     string    `json:"error,omitempty"`
	Message   string    `json:"message"`
}

// WebhookBodyOf is the body for an event, or nil when it calls no
// webhook.
func WebhookBodyOf(e Event) []byte {
	if e.TaskID == 0 || !slices.Contains(WebhookKinds, e.Kind) {
		return nil
	}
	body, _ := json.Marshal(WebhookBody{Event: WebhookEvent{Seq: e.Seq, Time: e.Time.UTC(), Kind: e.Kind, TaskID: e.TaskID,
		AccountID: e.AccountID, Login: e.Login, Error: e.Error, Message: e.Message}}) // plain fields: cannot fail
	return body
}

// WebhookSignature signs a body sent at a time: the value of the
// Mailmigrate-Signature header, "t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<unix seconds>.<body>" with the secret>". Signing the time with the
// body lets a receiver refuse an old body sent again.
func WebhookSignature(secret Password, at time.Time, body []byte) string {
	stamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(stamp + "."))
	mac.Write(body)
	return "t=" + stamp + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// WebhookBackoff is the wait after a delivery's attempt-th failed
// attempt: first, doubling, at most an hour.
func WebhookBackoff(first time.Duration, attempt int) time.Duration {
	wait := first
	for range attempt - 1 {
		if wait *= 2; wait >= time.Hour {
			return time.Hour
		}
	}
	return wait
}

// WebhookDelivery is one call a webhook owes, and how its attempts went.
type WebhookDelivery struct {
	ID            int64
	EventSeq      int64
	Kind          EventKind
	State         string // pending, delivered, failed
	Attempts      int
	LastStatus    int    // the receiver's HTTP status, 0 without an answer
	LastError     string // what went wrong with the last attempt, or empty
	CreatedAt     time.Time
	NextAttemptAt time.Time // while pending
	FinishedAt    time.Time // zero while pending
}

// The states of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// DeliveryStates are every state of a delivery.
var DeliveryStates = []string{DeliveryPending, DeliveryDelivered, DeliveryFailed}

// Due is a webhook call or a mail leased to a sender.
type Due struct {
	ID       int64
	TaskID   int64
	Kind     EventKind
	Attempts int // before this one
}

// Owed is the delivery itself, for a sender of any channel.
func (d Due) Owed() Due { return d }

// DueDelivery is a webhook call leased to a sender, with what it needs
// to send it.
type DueDelivery struct {
	Due
	Body   []byte
	URL    string
	Secret Password
}

// DeliveryAttempt is how an attempt went.
type DeliveryAttempt struct {
	Status      int
	Error       string
	State       string
	NextAttempt time.Time
}

// WebhookStore keeps webhooks and their deliveries.
type WebhookStore interface {
	// WebhookSet stores a task's webhook; ErrNotFound for a missing task.
	WebhookSet(ctx context.Context, taskID int64, w Webhook) (Webhook, error)
	WebhookGet(ctx context.Context, taskID int64) (Webhook, error)
	// WebhookTarget is where a task's webhook calls go, with its secret
	// and the task's name; ErrNoWebhook without one.
	WebhookTarget(ctx context.Context, taskID int64) (WebhookTarget, error)
	WebhookRemove(ctx context.Context, taskID int64) error
	// WebhookDeliveries is the delivery log; ErrNotFound for a missing
	// task.
	WebhookDeliveries(ctx context.Context, taskID int64) ([]WebhookDelivery, error)
}

// SetWebhook stores a task's webhook, keeping its secret when none is
// given.
func (s *Service) SetWebhook(ctx context.Context, taskID int64, w Webhook) (Webhook, error) {
	current, err := s.store.WebhookGet(ctx, taskID)
	if err != nil {
		return Webhook{}, err
	}
	if err := w.Normalize(current.SecretSet); err != nil {
		return Webhook{}, err
	}
	return s.store.WebhookSet(ctx, taskID, w)
}

// Webhook returns a task's webhook; its URL is empty without one.
func (s *Service) Webhook(ctx context.Context, taskID int64) (Webhook, error) {
	return s.store.WebhookGet(ctx, taskID)
}

// RemoveWebhook forgets a task's webhook and its secret; deliveries
// still due are given up.
func (s *Service) RemoveWebhook(ctx context.Context, taskID int64) error {
	return s.store.WebhookRemove(ctx, taskID)
}

// WebhookDeliveries is a task's delivery log, newest first.
func (s *Service) WebhookDeliveries(ctx context.Context, taskID int64) ([]WebhookDelivery, error) {
	return s.store.WebhookDeliveries(ctx, taskID)
}

// WebhookTarget is where a task's webhook calls go, and what signs them.
type WebhookTarget struct {
	URL      string
	Secret   Password
	TaskName string
}

// WebhookTester sends one call to a webhook at once, as its deliveries
// go (the same checks on where it may go, the same signature), and says
// how it went.
type WebhookTester interface {
	TestWebhook(ctx context.Context, target WebhookTarget, body []byte) WebhookTestResult
}

// WebhookTestResult is how a test call went: the receiver's HTTP status
// (0 without an answer), and what went wrong, in words, unless OK.
type WebhookTestResult struct {
	OK     bool
	Status int
	Error  string
	Took   time.Duration
}

// TestWebhook calls the task's webhook once, now, with a signed
// webhook.test body, so that an operator knows before a pass ends that
// the receiver takes the calls and checks their signature. The call is not
// in the delivery log and is not tried again.
func (s *Service) TestWebhook(ctx context.Context, taskID int64) (WebhookTestResult, error) {
	if s.Webhooks == nil {
		return WebhookTestResult{}, ErrWebhooksUnavailable
	}
	target, err := s.store.WebhookTarget(ctx, taskID)
	if err != nil {
		return WebhookTestResult{}, err
	}
	body, _ := json.Marshal(WebhookBody{Task: &WebhookTask{ID: taskID, Name: target.TaskName}, Event: WebhookEvent{
		Time: s.now().UTC(), Kind: EventWebhookTest, TaskID: taskID,
		Message: "a test call of the task's webhook: its calls reach this receiver"}}) // plain fields: cannot fail
	return s.Webhooks.TestWebhook(ctx, target, body), nil
}
