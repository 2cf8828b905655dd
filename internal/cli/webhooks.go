package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// webhookSecretEnv holds a webhook's secret when no file is named.
const webhookSecretEnv = "MAILMIGRATE_WEBHOOK_SECRET"

// tasksWebhook shows a task's webhook, sets it (--set URL, the secret from
// --secret-file or MAILMIGRATE_WEBHOOK_SECRET) or removes it (--remove).
func tasksWebhook(ctx context.Context, s *session, args []string) error {
	webhookURL := s.flags.String("set", "", "call this http(s) URL when a pass ends or an account fails")
	secretFile := s.flags.String("secret-file", "", "file holding the signing secret, - for stdin; default: the variable "+webhookSecretEnv)
	remove := s.flags.Bool("remove", false, "stop calling the task's webhook")
	calls := s.flags.String("calls", "", "with --set: per_pass (the default: once when a pass ends, listing the accounts that did not complete) or per_account (also once for each account that fails)")
	test := s.flags.Bool("test", false, "call the webhook once, now, signed, and say how the receiver answered (exit 1 unless it took the call)")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	if *remove && (*webhookURL != "" || *secretFile != "" || *test) {
		return s.usageErrorf("--remove takes neither --set, --secret-file nor --test")
	}
	if *secretFile != "" && *webhookURL == "" {
		return s.usageErrorf("--secret-file goes with --set URL")
	}
	switch {
	case *remove:
		resp, err := s.client.RemoveTaskWebhookWithResponse(ctx, id)
		return expect(resp, err, http.StatusNoContent)
	case *webhookURL != "":
		secret, err := s.readSecret(*secretFile, webhookSecretEnv)
		if err != nil {
			return err
		}
		policy := api.WebhookCalls(*calls)
		if policy == "" { // PUT replaces the record: a new URL alone keeps the calls as they were
			current, err := s.client.GetTaskWebhookWithResponse(ctx, id)
			if err := expect(current, err, http.StatusOK); err != nil {
				return err
			}
			policy = current.JSON200.Calls
		}
		resp, err := s.client.SetTaskWebhookWithResponse(ctx, id, api.WebhookInput{Url: *webhookURL, Secret: secret, Calls: policy})
		if err := expect(resp, err, http.StatusOK); err != nil {
			return err
		}
		if !*test {
			return s.printWebhook(*resp.JSON200)
		}
		return s.testWebhook(ctx, id)
	case *test:
		return s.testWebhook(ctx, id)
	}
	resp, err := s.client.GetTaskWebhookWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	return s.printWebhook(*resp.JSON200)
}

func (s *session) printWebhook(w api.Webhook) error {
	return s.printOutput(w, func() error {
		secret := "not set"
		if w.SecretSet {
			secret = "set (never shown)"
		}
		return s.printFields([][2]string{{"URL", orDash(w.Url)}, {"Secret", secret}, {"Calls", string(w.Calls)}})
	})
}

// tasksDeliveries lists a task's webhook deliveries, newest first.
func tasksDeliveries(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.ListWebhookDeliveriesWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	deliveries := *resp.JSON200
	return s.printOutput(deliveries, func() error { return s.printDeliveries(deliveries, "STATUS") })
}

// printDeliveries lists webhook calls or mails; status names the column
// of the other side's last answer (an HTTP status, an SMTP reply).
func (s *session) printDeliveries(deliveries []api.WebhookDelivery, status string) error {
	rows := make([][]string, 0, len(deliveries))
	for _, d := range deliveries {
		answer := "-"
		if d.LastStatus != 0 {
			answer = strconv.Itoa(d.LastStatus)
		}
		rows = append(rows, []string{itoa(d.Id), timeOrDash(&d.CreatedAt), string(d.Kind), string(d.State),
			strconv.Itoa(d.Attempts), answer, orDash(d.LastError)})
	}
	return s.printTable([]string{"ID", "CREATED", "EVENT", "STATE", "ATTEMPTS", status, "LAST ERROR"}, rows)
}

// tasksMail shows who a task mails its summary and report to, and the
// mails sent; sets the recipients (--to) or removes them (--remove).
func tasksMail(ctx context.Context, s *session, args []string) error {
	to := s.flags.String("to", "", "mail these addresses, comma-separated, when a pass ends or the final pass does")
	remove := s.flags.Bool("remove", false, "mail no one about the task")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	switch {
	case *remove && *to != "":
		return s.usageErrorf("--remove takes no --to")
	case *remove:
		resp, err := s.client.RemoveTaskMailWithResponse(ctx, id)
		return expect(resp, err, http.StatusNoContent)
	case *to != "":
		resp, err := s.client.SetTaskMailWithResponse(ctx, id, api.MailInput{To: strings.Split(*to, ",")})
		if err := expect(resp, err, http.StatusOK); err != nil {
			return err
		}
	}
	resp, err := s.client.GetTaskMailWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	m := *resp.JSON200
	log, err := s.client.ListMailDeliveriesWithResponse(ctx, id)
	if err := expect(log, err, http.StatusOK); err != nil {
		return err
	}
	return s.printOutput(m, func() error {
		server := "configured"
		if !m.SmtpConfigured {
			server = "none: start the service with MAILMIGRATE_SMTP_URL"
		}
		if err := s.printFields([][2]string{{"Mail to", orDash(strings.Join(m.To, ", "))}, {"SMTP server", server}}); err != nil {
			return err
		}
		if len(*log.JSON200) == 0 {
			return nil
		}
		fmt.Fprintln(s.sys.Stdout)
		return s.printDeliveries(*log.JSON200, "SMTP REPLY")
	})
}

// testWebhook calls the task's webhook once and says how it went; an
// error unless the receiver took the call.
func (s *session) testWebhook(ctx context.Context, id int64) error {
	resp, err := s.client.TestTaskWebhookWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	r := *resp.JSON200
	if err := s.printOutput(r, func() error {
		if r.Ok {
			_, err := fmt.Fprintf(s.sys.Stdout, "the receiver took the test call (HTTP %d, %d ms)\n", r.Status, r.TookMs)
			return err
		}
		return nil
	}); err != nil {
		return err
	}
	if !r.Ok {
		return &unfinishedError{reason: "the test call did not go through: " + r.Error}
	}
	return nil
}
