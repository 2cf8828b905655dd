package app_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// webhookReceiver is a receiver as a user would write one: it checks each
// call's signature with the shared secret and its time, and keeps what it
// accepted. Its first refuse calls answer 503.
type webhookReceiver struct {
	secret string
	mu     sync.Mutex
	calls  int
	refuse int
	bodies []receivedBody
	bad    []string // why a call's signature did not hold
}

type receivedBody struct {
	Delivery, Kind string
	Task           struct {
		ID   int64
		Name string
	}
	AccountsNotCompleted []struct {
		AccountID int64 `json:"account_id"`
		Login     string
		State     string
		Error     string
	} `json:"accounts_not_completed"`
	AccountsNotCompletedTotal int `json:"accounts_not_completed_total"`
	Event                     struct {
		Seq       int64
		Kind      api.EventKind
		TaskID    int64 `json:"task_id"`
		AccountID int64 `json:"account_id"`
		Login     string
		Error     string
		Message   string
	}
}

func (r *webhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.refuse {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	// Mailmigrate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">
	var stamp, signature string
	for part := range strings.SplitSeq(req.Header.Get("Mailmigrate-Signature"), ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			stamp = v
		} else if v, ok := strings.CutPrefix(part, "v1="); ok {
			signature = v
		}
	}
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write([]byte(stamp + "."))
	mac.Write(body)
	got, _ := hex.DecodeString(signature)
	sent, err := strconv.ParseInt(stamp, 10, 64)
	switch {
	case !hmac.Equal(got, mac.Sum(nil)):
		r.bad = append(r.bad, "the signature does not match")
	case err != nil || time.Since(time.Unix(sent, 0)).Abs() > 5*time.Minute:
		r.bad = append(r.bad, "the time is off: "+stamp)
	default:
		var b receivedBody
		if err := json.Unmarshal(body, &b); err != nil {
			r.bad = append(r.bad, err.Error())
		}
		b.Delivery, b.Kind = req.Header.Get("Mailmigrate-Delivery"), req.Header.Get("Mailmigrate-Event")
		r.bodies = append(r.bodies, b)
		return
	}
	http.Error(w, "bad signature", http.StatusUnauthorized)
}

func (r *webhookReceiver) received() []receivedBody {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

// TestWebhookTellsOfPassesAndFailures: a task's webhook is called, signed,
// when a pass ends and when an account fails; a receiver that refuses the
// first calls gets them again after the backoff; the delivery log shows
// every attempt's outcome and never the secret. A body signed with another
// secret is refused by the receiver.
func TestWebhookTellsOfPassesAndFailures(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{Delivery: delivery.Options{Poll: 20 * time.Millisecond, Backoff: 50 * time.Millisecond}})
	ctx := context.Background()
	const secret = "whsec-0123456789abcdef"
	receiver := &webhookReceiver{secret: secret, refuse: 2}
	hook := httptest.NewServer(receiver)
	t.Cleanup(hook.Close)

	users := map[string]string{"alice": "a", "bob": "b"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, Messages: 5}))
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "alice,a\nbob,wrong\n")

	if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: hook.URL}); err != nil ||
		resp.StatusCode() != http.StatusBadRequest || string(resp.Body) != "secret must be given: the bodies are signed with it" {
		t.Errorf("a webhook without a secret: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: "ftp://hooks.example/", Secret: secret}); err != nil ||
		resp.StatusCode() != http.StatusBadRequest || !strings.HasPrefix(string(resp.Body), "url must be an absolute http or https URL") {
		t.Errorf("a webhook to ftp: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	set, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: hook.URL, Secret: secret, Calls: api.WebhookCallsPerAccount})
	if err != nil || set.JSON200 == nil || set.JSON200.Url != hook.URL || !set.JSON200.SecretSet || strings.Contains(string(set.Body), secret) ||
		set.JSON200.Calls != api.WebhookCallsPerAccount {
		t.Fatalf("set the webhook: %v %v", err, set)
	}

	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)
	testsupport.Eventually(t, 20*time.Second, func() error {
		if n := len(receiver.received()); n != 2 {
			return fmt.Errorf("the receiver accepted %d calls, want 2", n)
		}
		return nil
	})
	bodies := receiver.received()
	slices.SortFunc(bodies, func(a, b receivedBody) int { return int(a.Event.Seq - b.Event.Seq) })
	failed, finished := bodies[0], bodies[1]
	if failed.Kind != "account.failed" || failed.Event.Kind != api.EventKindAccountFailed || failed.Event.Login != "bob" ||
		failed.Event.TaskID != taskID || failed.Event.Error == "" || failed.Task.ID != taskID || failed.Task.Name == "" {
		t.Errorf("the account.failed call: %+v", failed)
	}
	if finished.Kind != "run.finished" || finished.Event.Kind != api.EventKindRunFinished || finished.Event.TaskID != taskID || finished.Event.Message == "" ||
		finished.AccountsNotCompletedTotal != 1 || len(finished.AccountsNotCompleted) != 1 || finished.AccountsNotCompleted[0].Login != "bob" {
		t.Errorf("the run.finished call: %+v", finished)
	}
	if receiver.bad != nil {
		t.Errorf("signatures that did not hold: %v", receiver.bad)
	}

	// The receiver has a call before its sender records the answer: wait for the records.
	var log *api.ListWebhookDeliveriesResponse
	testsupport.Eventually(t, 10*time.Second, func() error {
		var err error
		log, err = s.Client.ListWebhookDeliveriesWithResponse(ctx, taskID)
		if err != nil || log.JSON200 == nil || len(*log.JSON200) != 2 {
			return fmt.Errorf("the delivery log: %v %v", err, log)
		}
		for _, d := range *log.JSON200 {
			if d.State == api.WebhookDeliveryStatePending {
				return fmt.Errorf("delivery %d still pending", d.Id)
			}
		}
		return nil
	})
	attempts := 0
	for _, d := range *log.JSON200 {
		attempts += d.Attempts
		if d.State != api.WebhookDeliveryStateDelivered || d.LastStatus != http.StatusOK || d.LastError != "" || d.FinishedAt == nil ||
			strconv.FormatInt(d.Id, 10) != map[api.EventKind]string{api.EventKindAccountFailed: failed.Delivery, api.EventKindRunFinished: finished.Delivery}[d.Kind] {
			t.Errorf("delivery %+v", d)
		}
	}
	if attempts != 4 { // the two refused calls, and the two accepted
		t.Errorf("the deliveries took %d attempts, want 4", attempts)
	}
	if strings.Contains(string(log.Body), secret) {
		t.Errorf("the delivery log holds the secret: %s", log.Body)
	}
	if got, err := s.Client.GetTaskWebhookWithResponse(ctx, taskID); err != nil || got.JSON200 == nil || got.JSON200.Url != hook.URL ||
		strings.Contains(string(got.Body), secret) {
		t.Errorf("get the webhook: %v %v", err, got)
	}

	// A receiver with another secret refuses every call: the delivery is
	// given up after its attempts, each in the log with the answer.
	receiver.mu.Lock()
	receiver.secret = "another-secret-0123456789"
	receiver.mu.Unlock()
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run again: %v %v", err, resp)
	}
	testsupport.Eventually(t, 60*time.Second, func() error {
		log, err := s.Client.ListWebhookDeliveriesWithResponse(ctx, taskID)
		if err != nil || log.JSON200 == nil {
			return fmt.Errorf("the delivery log: %v", err)
		}
		newest := (*log.JSON200)[0]
		if newest.Kind != api.EventKindRunFinished || newest.State != api.WebhookDeliveryStateFailed {
			return fmt.Errorf("the newest delivery: %+v", newest)
		}
		if newest.Attempts != 8 || newest.LastStatus != http.StatusUnauthorized || newest.LastError != "the receiver answered 401 Unauthorized" {
			t.Errorf("the given-up delivery: %+v", newest)
		}
		return nil
	})
	if n := len(receiver.received()); n != 2 {
		t.Errorf("the receiver accepted %d calls signed with another secret", n-2)
	}

	if resp, err := s.Client.RemoveTaskWebhookWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("remove: %v %v", err, resp)
	}
	if got, err := s.Client.GetTaskWebhookWithResponse(ctx, taskID); err != nil || got.JSON200 == nil || got.JSON200.Url != "" || got.JSON200.SecretSet {
		t.Errorf("the webhook after its removal: %v %v", err, got)
	}
}

// TestWebhookOncePerPass: by default a task's webhook is called once when
// a pass ends, whatever the number of accounts that failed; its body
// lists them, with their state and error. No account.failed call goes out.
func TestWebhookOncePerPass(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{Delivery: delivery.Options{Poll: 20 * time.Millisecond}})
	ctx := context.Background()
	const secret = "whsec-per-pass-0123456789"
	receiver := &webhookReceiver{secret: secret}
	hook := httptest.NewServer(receiver)
	t.Cleanup(hook.Close)
	users := map[string]string{"ann": "a", "bob": "b", "cid": "c"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "ann,a\nbob,wrong\ncid,wrong\n")
	set, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: hook.URL, Secret: secret})
	if err != nil || set.JSON200 == nil || set.JSON200.Calls != api.WebhookCallsPerPass {
		t.Fatalf("set the webhook: %v %v, want calls per_pass by default", err, set)
	}
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompletedWithErrors)
	testsupport.Eventually(t, 20*time.Second, func() error {
		if n := len(receiver.received()); n != 1 {
			return fmt.Errorf("the receiver accepted %d calls, want 1", n)
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond) // a second call would be sent by now
	bodies := receiver.received()
	if len(bodies) != 1 || bodies[0].Kind != "run.finished" || bodies[0].AccountsNotCompletedTotal != 2 || len(bodies[0].AccountsNotCompleted) != 2 {
		t.Fatalf("the receiver got %+v, want one run.finished listing bob and cid", bodies)
	}
	for i, login := range []string{"bob", "cid"} {
		if a := bodies[0].AccountsNotCompleted[i]; a.Login != login || a.State != "failed" || !strings.Contains(a.Error, "authentication failed") {
			t.Errorf("account %d of the list: %+v, want %s failed in words", i, a, login)
		}
	}
}

// TestRemovingTheWebhookGivesUpItsCalls: calls still due when the webhook
// is removed are given up at once, saying why, not tried again.
func TestRemovingTheWebhookGivesUpItsCalls(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{Delivery: delivery.Options{Poll: 20 * time.Millisecond, Backoff: time.Hour}})
	ctx := context.Background()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	users := map[string]string{"ann": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "ann,pw\n")
	if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: down.URL, Secret: "whsec-0123456789abcdef"}); err != nil || resp.JSON200 == nil {
		t.Fatalf("set the webhook: %v %v", err, resp)
	}
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	deliveries := func() []api.WebhookDelivery {
		log, err := s.Client.ListWebhookDeliveriesWithResponse(ctx, taskID)
		if err != nil || log.JSON200 == nil {
			t.Fatalf("the delivery log: %v %v", err, log)
		}
		return *log.JSON200
	}
	testsupport.Eventually(t, 10*time.Second, func() error {
		if d := deliveries(); len(d) != 1 || d[0].Attempts != 1 || d[0].State != api.WebhookDeliveryStatePending {
			return fmt.Errorf("deliveries %+v, want one tried once, due again in an hour", d)
		}
		return nil
	})
	if resp, err := s.Client.RemoveTaskWebhookWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("remove: %v %v", err, resp)
	}
	if d := deliveries(); len(d) != 1 || d[0].State != api.WebhookDeliveryStateFailed || d[0].LastError != "the task's webhook was removed" || d[0].Attempts != 1 {
		t.Errorf("after the removal: %+v, want the call given up", d)
	}
}

// TestWebhooksGoWhereTheyShould: by default a webhook is called at public
// addresses only: a receiver on loopback (the service itself, here) or the
// cloud's metadata address gets no call, and the delivery log says why;
// naming the receiver in the allowed hosts lets the call through. A URL
// with a user and password is refused: the signature does that job.
func TestWebhooksGoWhereTheyShould(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		allowed   []string
		delivered bool
	}{
		{"by default", []string{"hooks.internal.example"}, false},
		{"allowed by the operator", []string{"127.0.0.1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := servicetest.Start(t, servicetest.Options{Delivery: delivery.Options{Poll: 20 * time.Millisecond, Backoff: time.Hour, AllowedHosts: tc.allowed}})
			ctx := context.Background()
			const secret = "whsec-0123456789abcdef"
			receiver := &webhookReceiver{secret: secret}
			hook := httptest.NewServer(receiver)
			t.Cleanup(hook.Close)
			users := map[string]string{"ann": "pw"}
			old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
			neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
			taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
			importAccounts(t, s, taskID, "ann,pw\n")
			withUser := strings.Replace(hook.URL, "http://", "http://admin:pw@", 1)
			if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: withUser, Secret: secret}); err != nil ||
				resp.StatusCode() != http.StatusBadRequest || !strings.HasPrefix(string(resp.Body), "url must not carry a user or password") {
				t.Errorf("a URL with credentials: %v %d %s", err, resp.StatusCode(), resp.Body)
			}
			if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: hook.URL, Secret: secret}); err != nil || resp.JSON200 == nil {
				t.Fatalf("set the webhook: %v %v", err, resp)
			}
			if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
				t.Fatalf("run: %v %v", err, resp)
			}
			servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
			testsupport.Eventually(t, 10*time.Second, func() error {
				log, err := s.Client.ListWebhookDeliveriesWithResponse(ctx, taskID)
				if err != nil || log.JSON200 == nil || len(*log.JSON200) != 1 || (*log.JSON200)[0].Attempts != 1 {
					return fmt.Errorf("the delivery log: %v %+v", err, log.JSON200)
				}
				d := (*log.JSON200)[0]
				switch {
				case tc.delivered && d.State != api.WebhookDeliveryStateDelivered:
					return fmt.Errorf("delivery %+v, want delivered", d)
				case !tc.delivered && (d.State != api.WebhookDeliveryStatePending || !strings.Contains(d.LastError, "internal address")):
					return fmt.Errorf("delivery %+v, want refused for an internal address", d)
				}
				return nil
			})
			if got := len(receiver.received()); got != map[bool]int{true: 1, false: 0}[tc.delivered] {
				t.Errorf("the receiver got %d calls", got)
			}
		})
	}
}

// TestWebhookTestCall: "send a test" calls the task's webhook at once,
// signed as a pass's calls are, with the task's name, and says how the
// receiver answered: taken, refused with its status, or not reached. The
// call is not in the delivery log; a task without a webhook is told so.
func TestWebhookTestCall(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	const secret = "whsec-test-0123456789"
	receiver := &webhookReceiver{secret: secret, refuse: 1}
	hook := httptest.NewServer(receiver)
	t.Cleanup(hook.Close)
	taskID := createTask(t, s, createEndpoint(t, s, "127.0.0.1", 1143), createEndpoint(t, s, "127.0.0.1", 2143), "")

	if resp, err := s.Client.TestTaskWebhookWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusConflict ||
		string(resp.Body) != "the task has no webhook: set its URL and secret first" {
		t.Errorf("a test without a webhook: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	if resp, err := s.Client.TestTaskWebhookWithResponse(ctx, taskID+100); err != nil || resp.StatusCode() != http.StatusNotFound {
		t.Errorf("a test of a missing task: %v %v", err, resp)
	}
	if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: hook.URL, Secret: secret}); err != nil || resp.JSON200 == nil {
		t.Fatalf("set webhook: %v %v", err, resp)
	}
	test := func() api.WebhookTest {
		t.Helper()
		resp, err := s.Client.TestTaskWebhookWithResponse(ctx, taskID)
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("test: %v %v", err, resp)
		}
		return *resp.JSON200
	}
	if refused := test(); refused.Ok || refused.Status != http.StatusServiceUnavailable || refused.Error != "the receiver answered 503 Service Unavailable" {
		t.Errorf("a receiver down for maintenance: %+v", refused)
	}
	if taken := test(); !taken.Ok || taken.Status != http.StatusOK || taken.Error != "" {
		t.Errorf("a receiver that takes it: %+v", taken)
	}
	bodies := receiver.received()
	if len(receiver.bad) > 0 || len(bodies) != 1 || bodies[0].Kind != "webhook.test" || bodies[0].Delivery != "test" ||
		bodies[0].Event.Kind != api.EventKindWebhookTest || bodies[0].Task.ID != taskID || bodies[0].Task.Name != "t" ||
		!strings.Contains(bodies[0].Event.Message, "test call") {
		t.Errorf("the receiver got %+v (bad: %v)", bodies, receiver.bad)
	}
	if deliveries, err := s.Client.ListWebhookDeliveriesWithResponse(ctx, taskID); err != nil || deliveries.JSON200 == nil || len(*deliveries.JSON200) != 0 {
		t.Errorf("a test call is in the delivery log: %v %v", err, deliveries)
	}
	hook.Close()
	if unreached := test(); unreached.Ok || unreached.Status != 0 ||
		!strings.HasPrefix(unreached.Error, "nothing answers at the receiver's address (is it running, on that port?): ") ||
		!strings.Contains(unreached.Error, "connection refused") {
		t.Errorf("a receiver that is gone: %+v", unreached)
	}
}
