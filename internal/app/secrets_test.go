package app_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/smtptest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// echoing is an IMAP server's conversation that refuses every command,
// quoting it back: a LOGIN's refusal then holds the password it was sent.
func echoing(conn net.Conn) {
	io.WriteString(conn, "* OK [CAPABILITY IMAP4rev1] echo ready\r\n") //nolint:errcheck // the client may be gone
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		tag, command, _ := strings.Cut(lines.Text(), " ")
		fmt.Fprintf(conn, "%s NO [AUTHENTICATIONFAILED] refused: %s\r\n", tag, command)
	}
}

// TestServersEchoingSecretsLeaveNone: a server that quotes the LOGIN
// command, password and all, in its refusal, for a run and a login test:
// the password is in none of what the service keeps or says (the
// account's error, the events, the report, the API's answers, the
// webhook's calls, the mail with its report, the log).
func TestServersEchoingSecretsLeaveNone(t *testing.T) {
	t.Parallel()
	const password = "Echoed-Pa55word-of-ann"
	log := &testsupport.SyncBuffer{}
	smtp := smtptest.Start(t, 0)
	mailServer, err := delivery.ParseMailServer("smtp+plain://"+smtp.Addr(), "", "mailmigrate@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	s := servicetest.Start(t, servicetest.Options{Log: log, Mail: &mailServer, Delivery: delivery.Options{Poll: 20 * time.Millisecond}})
	host, port := imaptest.StartScripted(t, echoing)
	taskID := createTask(t, s, createEndpoint(t, s, host, port), createEndpoint(t, s, host, port), "")
	importAccounts(t, s, taskID, "ann,"+password+"\n")
	ctx := context.Background()
	var hookMu sync.Mutex
	var hookBodies []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hookMu.Lock()
		hookBodies = append(hookBodies, string(body))
		hookMu.Unlock()
	}))
	t.Cleanup(hook.Close)
	if resp, err := s.Client.SetTaskWebhookWithResponse(ctx, taskID, api.WebhookInput{Url: hook.URL, Secret: "webhook-secret-0123456789"}); err != nil || resp.StatusCode() != http.StatusOK {
		t.Fatalf("webhook: %v %v", err, resp)
	}
	if resp, err := s.Client.SetTaskMailWithResponse(ctx, taskID, api.MailInput{To: []string{"it@acme.example"}}); err != nil || resp.StatusCode() != http.StatusOK {
		t.Fatalf("mail: %v %v", err, resp)
	}
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateFailed)
	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}
	servicetest.WaitTestsDone(t, s.Client, taskID)

	ann := accountByLogin(t, s, taskID, "ann")
	if !strings.Contains(ann.LastError, "refused: LOGIN") {
		t.Fatalf("the server's words are not in the account's error: %q", ann.LastError)
	}
	var stored int
	if err := s.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM accounts WHERE last_error LIKE '%' || $1 || '%' OR source_test_error LIKE '%' || $1 || '%'
		   OR destination_test_error LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM events WHERE error LIKE '%' || $1 || '%' OR message LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM account_passes WHERE last_error LIKE '%' || $1 || '%')`, password).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Errorf("%d rows of the database hold the password", stored)
	}
	for _, path := range []string{"/tasks/%d/accounts", "/tasks/%d/events?limit=1000", "/tasks/%d/report.csv"} {
		resp, err := http.Get(fmt.Sprintf(s.API+path, taskID))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), password) {
			t.Errorf("GET %s holds the password", path)
		}
	}
	// The pass's end, with the account that failed and its error, is
	// called and mailed.
	testsupport.Eventually(t, 20*time.Second, func() error {
		hookMu.Lock()
		defer hookMu.Unlock()
		if len(hookBodies) < 1 || len(smtp.Messages()) < 1 {
			return fmt.Errorf("%d webhook calls and %d mails, want one of each", len(hookBodies), len(smtp.Messages()))
		}
		return nil
	})
	hookMu.Lock()
	calls := strings.Join(hookBodies, "\n")
	hookMu.Unlock()
	if !strings.Contains(calls, "refused: LOGIN") || strings.Contains(calls, password) {
		t.Errorf("the webhook's calls hold the password, or not the server's words: %.600s", calls)
	}
	for _, m := range smtp.Messages() {
		if text := mailText(t, m.Data); !strings.Contains(text, "account_id,source_login") || !strings.Contains(text, "refused: LOGIN") ||
			strings.Contains(text, password) {
			t.Errorf("the mail, its report decoded, holds the password, or not the report with the server's words: %.600s", text)
		}
	}
	if strings.Contains(log.String(), password) {
		t.Errorf("the service's log holds the password")
	}
}

// mailText is a mail's headers and every part's text, decoded from its
// transfer encoding (the report goes as a base64 attachment).
func mailText(t *testing.T, data string) string {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for key, values := range msg.Header {
		fmt.Fprintf(&text, "%s: %s\n", key, strings.Join(values, ", "))
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		body, _ := io.ReadAll(msg.Body)
		return text.String() + string(body)
	}
	parts := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := parts.NextPart()
		if err != nil {
			break
		}
		var body io.Reader = part
		if strings.EqualFold(part.Header.Get("Content-Transfer-Encoding"), "base64") {
			body = base64.NewDecoder(base64.StdEncoding, part)
		}
		decoded, _ := io.ReadAll(body)
		text.Write(decoded)
		text.WriteString("\n")
	}
	return text.String()
}
