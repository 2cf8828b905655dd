package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestRefusedMessagesAreNamed: a message the destination refuses is named
// as a person knows it, read from the source: its subject, date and size,
// beside its UID and the server's words, in the account's folders, its
// last error and the folder's event.
func TestRefusedMessagesAreNamed(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	users := map[string]string{"ann": "pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Users: users, MaxMailSize: 20000})
	sent := time.Date(2024, 3, 5, 10, 30, 0, 0, time.UTC)
	large := "Subject: Quarterly figures\r\nMessage-ID: <q3@old.example>\r\n\r\n" + strings.Repeat("figures and more figures\r\n", 2000)
	old.Load(t, "ann", imaptest.Corpus{Messages: []imaptest.Message{
		{Folder: "INBOX", Date: sent, Body: []byte("Subject: small\r\nMessage-ID: <s@old.example>\r\n\r\nhello\r\n")},
		{Folder: "INBOX", Date: sent, Body: []byte(large)}}})
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, "ann,pw\n")
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, &api.RunTaskParams{}, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	waitPasses(t, s, taskID, 1)
	ann := accountIDs(t, s, taskID)["ann"]
	folders, err := s.Client.ListAccountFoldersWithResponse(ctx, taskID, ann)
	if err != nil || folders.JSON200 == nil {
		t.Fatalf("ann's folders: %v %v", err, folders)
	}
	var refused []api.MessageRefusal
	for _, f := range *folders.JSON200 {
		refused = append(refused, f.Refused...)
	}
	if len(refused) != 1 || refused[0].Subject != "Quarterly figures" || refused[0].Size != int64(len(large)) ||
		refused[0].Date == nil || !refused[0].Date.Equal(sent) || refused[0].Side != "destination" || refused[0].Reason == "" {
		t.Fatalf("ann's refused messages: %+v, want the quarterly figures named", refused)
	}
	account, err := s.Client.GetAccountWithResponse(ctx, taskID, ann)
	if err != nil || account.JSON200 == nil {
		t.Fatalf("ann: %v %v", err, account)
	}
	if want := `"Quarterly figures" (2024-03-05, 52060 bytes)`; !strings.Contains(account.JSON200.LastError, want) {
		t.Errorf("ann's last error %q does not name the message (%s)", account.JSON200.LastError, want)
	}
}
