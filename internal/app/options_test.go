package app_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestTaskOptionsReachTheEngine: the options as the API takes them
// (patterns and a day as text) decide what a run through the service
// copies: a folder left out by a pattern, mail before the day, a message
// over the size limit, and a folder renamed by the map.
func TestTaskOptionsReachTheEngine(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	users := map[string]string{"ann": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})

	before := time.Date(2024, 12, 31, 23, 0, 0, 0, time.UTC)
	after := time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC)
	message := func(folder, subject string, date time.Time, bodyBytes int) imaptest.Message {
		body := fmt.Sprintf("From: a@example.org\r\nTo: ann@example.org\r\nSubject: %s\r\nMessage-ID: <%s@example.org>\r\n\r\n%s\r\n",
			subject, strings.ReplaceAll(subject, " ", "."), strings.Repeat("x", bodyBytes))
		return imaptest.Message{Folder: folder, Date: date, Body: []byte(body)}
	}
	old.Load(t, "ann", imaptest.Corpus{
		Folders: []imaptest.Folder{{Name: "INBOX"}, {Name: "Projects"}, {Name: "Old Stuff"}, {Name: "Sent Items"}},
		Messages: []imaptest.Message{
			message("INBOX", "last year", before, 100),
			message("INBOX", "this year", after, 100),
			message("INBOX", "too big", after, 20_000),
			message("Projects", "plan", after, 100),
			message("Old Stuff", "left out", after, 100),
			message("Sent Items", "sent", after, 100),
		},
	})

	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port),
		`{"exclude_folders":["^Old"],"since":"2025-01-01","max_message_bytes":10000,"folder_map":{"Sent Items":"Sent"}}`)
	importAccounts(t, s, taskID, "ann,pw\n")
	if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)

	got := neu.Read(t, "ann")
	var copied []string
	folders := map[string]bool{}
	for _, f := range got.Folders {
		folders[f.Name] = true
	}
	for _, m := range got.Messages {
		subject := strings.SplitN(strings.SplitN(string(m.Body), "Subject: ", 2)[1], "\r\n", 2)[0]
		copied = append(copied, m.Folder+": "+subject)
	}
	slices.Sort(copied)
	if want := []string{"INBOX: this year", "Projects: plan", "Sent: sent"}; !slices.Equal(copied, want) {
		t.Errorf("copied %q, want %q", copied, want)
	}
	if folders["Old Stuff"] || folders["Sent Items"] {
		t.Errorf("destination folders %v: the excluded or renamed source folder is there", folders)
	}
}
