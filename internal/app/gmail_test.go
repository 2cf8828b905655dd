package app_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestLeavingGmailThroughTheService: a task from the Gmail model to
// Dovecot, run through the API with each label policy, copies every
// message once (the task's gmail_labels chooses where), verifies every
// folder, and leaves All Mail, Starred and Important behind. A task made
// without the option shows the default, first-label.
func TestLeavingGmailThroughTheService(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	labels := [][]string{{`\Inbox`}, {`\Inbox`, "Work"}, {"Work", "Clients"}, {}, {`\Sent`}, {`\Starred`, `\Important`, "Clients"}}
	for _, policy := range []api.GmailLabels{api.GmailLabelsFirstLabel, api.GmailLabelsKeywords} {
		t.Run(string(policy), func(t *testing.T) {
			gmail := imaptest.StartGmail(t, imaptest.GmailOptions{Login: "ann@example.com", Password: "app-password"})
			for i, l := range labels {
				gmail.Add(t, imaptest.GmailMessage{Labels: l, Date: time.Date(2026, 11, 1, 9, i, 0, 0, time.UTC),
					Raw: fmt.Appendf(nil, "From: a@example.com\r\nSubject: %d\r\nMessage-ID: <%d@gmail.test>\r\n\r\nbody\r\n", i, i)})
			}
			dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"ann": "pw"}})
			taskID := createTask(t, s, createEndpoint(t, s, gmail.Host, gmail.Port), createEndpoint(t, s, dst.Host, dst.Port),
				fmt.Sprintf(`{"gmail_labels": %q}`, policy))
			importAccounts(t, s, taskID, "source_login,source_password,destination_login,destination_password\nann@example.com,app-password,ann,pw\n")
			if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != 202 {
				t.Fatalf("run: %v %v", err, resp)
			}
			task := servicetest.WaitTask(t, s.Client, taskID, func(task api.Task) error {
				if task.State != api.TaskStateCompleted && task.State != api.TaskStateFailed && task.State != api.TaskStateCompletedWithErrors {
					return fmt.Errorf("task is %s", task.State)
				}
				return nil
			})
			if task.State != api.TaskStateCompleted || task.Options.GmailLabels != policy {
				t.Fatalf("task %s with gmail_labels %q, want completed with %q", task.State, task.Options.GmailLabels, policy)
			}
			page, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
			if err != nil || page.JSON200 == nil || len(*page.JSON200) != 1 {
				t.Fatalf("accounts: %v %v", err, page)
			}
			if p := (*page.JSON200)[0].Progress; p.MessagesCopied != int64(len(labels)) || !p.SourceCounted || p.SourceMessages != int64(len(labels)) {
				t.Errorf("the account's progress %+v, want %d source messages, all copied", p, len(labels))
			}
			seen := map[string]string{}
			for _, m := range dst.Read(t, "ann").Messages {
				n := regexp.MustCompile(`<(\d+)@gmail\.test>`).FindSubmatch(m.Body)[1]
				if before, twice := seen[string(n)]; twice {
					t.Errorf("message %s is on the destination twice: in %s and %s", n, before, m.Folder)
				}
				seen[string(n)] = m.Folder
				if policy == api.GmailLabelsKeywords && string(n) == "2" && !slices.Contains(m.Flags, "Work") {
					t.Errorf("message 2 has flags %v, want its label Work as a keyword", m.Flags)
				}
			}
			if len(seen) != len(labels) {
				t.Errorf("%d messages on the destination, want %d: %v", len(seen), len(labels), seen)
			}
		})
	}
	plain := createTask(t, s, createEndpoint(t, s, "127.0.0.1", 1), createEndpoint(t, s, "127.0.0.1", 2), "")
	resp, err := s.Client.GetTaskWithResponse(context.Background(), plain)
	if err != nil || resp.JSON200 == nil || resp.JSON200.Options.GmailLabels != api.GmailLabelsFirstLabel {
		t.Errorf("a task without the option: %v %+v, want gmail_labels first-label", err, resp)
	}
}
