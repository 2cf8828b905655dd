package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// TestCancelIsPromptWhateverTheServerDoes runs one account against a
// source that stalls at a step of the copy, with timeouts so long that
// only the cancel can end the run: in the TLS handshake, at LOGIN, and in
// the middle of a message's literal. Each time the task leaves canceling
// within seconds.
func TestCancelIsPromptWhateverTheServerDoes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// source returns the stalling source's address and security.
		source func(t *testing.T) (host string, port int, security api.TLSMode)
		// stalled is how long after the account starts the stall is
		// surely reached.
		stalled time.Duration
	}{
		{"TLS handshake", func(t *testing.T) (string, int, api.TLSMode) {
			mute := imaptest.StartMute(t) // takes the connection, never answers the ClientHello
			return mute.Host, mute.Port, api.TLSModeSsl
		}, 300 * time.Millisecond},
		{"LOGIN", func(t *testing.T) (string, int, api.TLSMode) {
			mute := imaptest.StartMuteAfter(t, "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n")
			return mute.Host, mute.Port, api.TLSModePlain
		}, 300 * time.Millisecond},
		{"literal", func(t *testing.T) (string, int, api.TLSMode) {
			src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"user": "pw"}})
			src.Load(t, "user", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 1, LargeMessages: 1, LargeSize: 2 << 20}))
			// The session's first kilobytes pass in a fraction of a
			// second; the message's 2 MB would take 100 s.
			host, port := imaptest.SlowProxy(t, src.Addr(), 20_000)
			return host, port, api.TLSModePlain
		}, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := servicetest.Start(t, servicetest.Options{Workers: worker.Options{
				Tuning: transfer.Tuning{GreetingTimeout: 10 * time.Minute, IdleTimeout: 10 * time.Minute},
			}})
			ctx := context.Background()
			host, port, security := tc.source(t)
			dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"user": "pw"}})
			resp, err := s.Client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: host, Port: port, TlsMode: security, TlsSkipVerify: true})
			if err != nil || resp.JSON201 == nil {
				t.Fatalf("create endpoint: %v %v", err, resp)
			}
			taskID := createTask(t, s, resp.JSON201.Id, createEndpoint(t, s, dst.Host, dst.Port), "")
			importAccounts(t, s, taskID, "user,pw\n")
			if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
				t.Fatalf("run: %v %v", err, resp)
			}
			waitAccounts(t, s, taskID, func(c api.AccountCounts) bool { return c.Running == 1 })
			time.Sleep(tc.stalled)

			canceled := time.Now()
			if resp, err := s.Client.CancelTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
				t.Fatalf("cancel: %v %v", err, resp)
			}
			servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCanceled)
			if took := time.Since(canceled); took > 5*time.Second {
				t.Errorf("the cancel took %s against a server stalled in the %s", took, tc.name)
			}
		})
	}
}
