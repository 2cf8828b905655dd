package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestThreeHundredAccountsWithOneMasterLogin: an administrator who knows
// no user's password migrates 300 mailboxes, imported as a file of logins
// alone, with one master login on each server: SASL PLAIN with the account
// as authorization identity on the source, Dovecot's account*master on the
// destination. Every account completes with every message.
func TestThreeHundredAccountsWithOneMasterLogin(t *testing.T) {
	t.Parallel()
	const accounts, messages = 300, 2
	s := servicetest.Start(t, servicetest.Options{MaxWorkers: 8})
	ctx := context.Background()
	users := map[string]string{}
	var csv strings.Builder
	csv.WriteString("source_login\n")
	for i := range accounts {
		login := fmt.Sprintf("user%03d", i)
		users[login] = fmt.Sprintf("only-the-user-knows-%d", i)
		csv.WriteString(login + "\n")
	}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, MasterUsers: map[string]string{"admin": "old-master-pw"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, MasterUsers: map[string]string{"migrator": "new-master-pw"}})
	for login := range users {
		old.WriteInbox(t, login, messages, func(i int) []byte {
			return fmt.Appendf(nil, "From: a@example.com\r\nSubject: %s %d\r\nMessage-ID: <%s.%d@example.com>\r\n\r\nbody\r\n", login, i, login, i)
		})
	}
	src := createMasterEndpoint(t, s, old.Host, old.Port, api.EndpointAuthInput{Method: api.AuthMethodMaster, MasterLogin: "admin", MasterPassword: "old-master-pw"})
	dst := createMasterEndpoint(t, s, neu.Host, neu.Port, api.EndpointAuthInput{Method: api.AuthMethodMaster, MasterLogin: "migrator",
		MasterPassword: "new-master-pw", MasterForm: api.MasterFormSeparator})
	taskID := createTask(t, s, src, dst, `{"parallel_accounts": 16}`)
	importAccounts(t, s, taskID, csv.String())

	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	task := servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateCompleted)
	if task.Accounts.Completed != accounts {
		t.Errorf("accounts: %+v, want all %d completed", task.Accounts, accounts)
	}
	runs, err := s.Client.ListTaskPassesWithResponse(ctx, taskID)
	if err != nil || runs.JSON200 == nil || len(*runs.JSON200) != 1 {
		t.Fatalf("runs: %v %v", err, runs)
	}
	if run := (*runs.JSON200)[0]; run.MessagesCopied != accounts*messages || run.MessagesFailed != 0 {
		t.Errorf("the run copied %d messages with %d failed, want %d and none", run.MessagesCopied, run.MessagesFailed, accounts*messages)
	}
	// The users' own passwords open mailboxes that hold what was copied.
	for _, login := range []string{"user000", "user149", "user299"} {
		client := neu.Login(t, login, users[login])
		status, err := client.Status("INBOX", &imap.StatusOptions{NumMessages: true}).Wait()
		if err != nil || *status.NumMessages != messages {
			t.Errorf("%s's INBOX on the destination: %v %v, want %d messages", login, status, err, messages)
		}
		client.Close()
	}
}

func createMasterEndpoint(t *testing.T, s *servicetest.Service, host string, port int, auth api.EndpointAuthInput) int64 {
	t.Helper()
	resp, err := s.Client.CreateEndpointWithResponse(context.Background(), api.EndpointInput{Host: host, Port: port, TlsMode: api.TLSModePlain, Auth: &auth})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create endpoint: %v %v", err, resp)
	}
	return resp.JSON201.Id
}

// TestRefusedMasterLoginPointsAtTheEndpoint: when Dovecot refuses the
// endpoint's master login, every account fails with advice that names the
// endpoint and its master login, never the account's password, which it
// does not have.
func TestRefusedMasterLoginPointsAtTheEndpoint(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	users := map[string]string{"ann": "ann-pw", "bob": "bob-pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, MasterUsers: map[string]string{"admin": "old-master-pw"}})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	src := createMasterEndpoint(t, s, old.Host, old.Port, api.EndpointAuthInput{Method: api.AuthMethodMaster, MasterLogin: "admin", MasterPassword: "a-wrong-pw"})
	dst := createMasterEndpoint(t, s, neu.Host, neu.Port, api.EndpointAuthInput{Method: api.AuthMethodPassword})
	taskID := createTask(t, s, src, dst, `{}`)
	importAccounts(t, s, taskID, "source_login,destination_password\nann,ann-pw\nbob,bob-pw\n")
	if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateFailed)
	accounts, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, nil)
	if err != nil || accounts.JSON200 == nil || len(*accounts.JSON200) != 2 {
		t.Fatalf("accounts: %v %v", err, accounts)
	}
	for _, a := range *accounts.JSON200 {
		if !strings.Contains(a.LastError, "The source endpoint's master login admin was refused for "+a.SourceLogin) ||
			strings.Contains(a.LastError, "Edit the account") {
			t.Errorf("%s's last error %q should point at the endpoint's master login", a.SourceLogin, a.LastError)
		}
	}
}
