package app_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/smtptest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// TestMailTellsOfThePassWithTheReport: with an SMTP server configured, a
// task mails its recipients when a pass ends: the summary in words and
// the CSV report attached; a server that refuses for now gets the mail
// again. Without an SMTP server, recipients are refused with words that
// say what to set.
func TestMailTellsOfThePassWithTheReport(t *testing.T) {
	t.Parallel()
	smtp := smtptest.Start(t, 1)
	server, err := delivery.ParseMailServer("smtp+plain://"+smtp.Addr(), "", "mailmigrate@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	s := servicetest.Start(t, servicetest.Options{Mail: &server,
		Delivery: delivery.Options{Poll: 20 * time.Millisecond, Backoff: 50 * time.Millisecond}})
	ctx := context.Background()
	users := map[string]string{"ann": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "ann", smallInbox("mail", 3))
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "ann,pw\n")

	if resp, err := s.Client.SetTaskMailWithResponse(ctx, taskID, api.MailInput{To: []string{"IT team <it@acme.example>"}}); err != nil ||
		resp.StatusCode() != http.StatusBadRequest || !strings.HasPrefix(string(resp.Body), `to "IT team <it@acme.example>" is not a mail address`) {
		t.Errorf("a named address: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	set, err := s.Client.SetTaskMailWithResponse(ctx, taskID, api.MailInput{To: []string{"it@acme.example", "IT@acme.example", "boss@acme.example"}})
	if err != nil || set.JSON200 == nil || len(set.JSON200.To) != 2 || !set.JSON200.SmtpConfigured {
		t.Fatalf("set the recipients: %v %v", err, set)
	}
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	testsupport.Eventually(t, 20*time.Second, func() error {
		if n := len(smtp.Messages()); n != 1 {
			return fmt.Errorf("%d mails taken, want 1", n)
		}
		return nil
	})
	got := smtp.Messages()[0]
	if smtp.Refused() != 1 || got.From != "mailmigrate@acme.example" || strings.Join(got.To, ",") != "it@acme.example,boss@acme.example" {
		t.Errorf("mail from %s to %v after %d refusals", got.From, got.To, smtp.Refused())
	}
	msg, err := mail.ReadMessage(strings.NewReader(got.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if !strings.Contains(subject, "pass finished: completed") {
		t.Errorf("subject %q", subject)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	parts := multipart.NewReader(msg.Body, params["boundary"])
	summary, err := parts.NextPart() // quoted-printable, undone by the reader
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(summary)
	if !strings.Contains(string(text), "Accounts:   1 (1 completed)") || !strings.Contains(string(text), "Cut-over:   in sync: pass 1 ended") {
		t.Errorf("summary:\n%s", text)
	}
	attachment, err := parts.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(attachment)
	report, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(raw), "\r\n", ""))
	if err != nil || attachment.FileName() != fmt.Sprintf("task-%d-report.csv", taskID) || !strings.Contains(string(report), "ann") {
		t.Errorf("attachment %q: %v\n%s", attachment.FileName(), err, report)
	}
	// The SMTP server has the mail before the sender records it: wait for the record.
	testsupport.Eventually(t, 10*time.Second, func() error {
		log, err := s.Client.ListMailDeliveriesWithResponse(ctx, taskID)
		if err != nil || log.JSON200 == nil || len(*log.JSON200) != 1 || (*log.JSON200)[0].State != api.WebhookDeliveryStateDelivered || (*log.JSON200)[0].Attempts != 2 {
			return fmt.Errorf("mail log: %v %+v", err, log.JSON200)
		}
		return nil
	})

	// A service without an SMTP server says what to set.
	bare := servicetest.Start(t, servicetest.Options{})
	other := createTask(t, bare, createEndpoint(t, bare, old.Host, old.Port), createEndpoint(t, bare, neu.Host, neu.Port), "")
	if resp, err := bare.Client.SetTaskMailWithResponse(ctx, other, api.MailInput{To: []string{"it@acme.example"}}); err != nil ||
		resp.StatusCode() != http.StatusConflict || !strings.Contains(string(resp.Body), "MAILMIGRATE_SMTP_URL") {
		t.Errorf("without an SMTP server: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
}
