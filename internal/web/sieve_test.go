package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// testSieveScripts: an operator names the old server's ManageSieve in the
// endpoint form; after a pass, the account's page lists its scripts: the
// active one marked, the folder a filter files into renamed as the task
// renames it, and the one the new server refused in its words; and a
// message the new server refused, by its subject.
func testSieveScripts(t *testing.T, browser context.Context) {
	s := startSite(t, "")
	users := map[string]string{"alice": "a"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, ManageSieve: true, SieveExtensions: "+editheader"})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, ManageSieve: true, MaxMailSize: 100000})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 4, Messages: 6}))
	// One message the new server refuses: the page names it.
	old.Load(t, "alice", imaptest.Corpus{Messages: []imaptest.Message{{Folder: "INBOX",
		Body: []byte("Subject: Holiday photos\r\n\r\n" + strings.Repeat("0123456789abcdef\r\n", 9000))}}})
	old.WriteScript(t, "alice", "rules", "require \"fileinto\";\r\nif header :contains \"list-id\" \"go\" { fileinto \"Projects/2024\"; }\r\n", true)
	old.WriteScript(t, "alice", "stamp", "require \"editheader\";\r\naddheader \"X-Old\" \"1\";\r\n", false)

	tb := openTab(t, browser, s)
	tb.open("#/endpoints")
	tb.waitText("main", "No endpoint yet")
	tb.fill(map[string]string{
		"#endpoint-form [name=host]":     old.Host,
		"#endpoint-form [name=port]":     strconv.Itoa(old.Port),
		"#endpoint-form [name=tls_mode]": "plain",
	})
	tb.click("#endpoint-skip-verify")
	tb.click("#endpoint-form details.sieve summary")
	tb.fill(map[string]string{"#endpoint-form [name=sieve_port]": strconv.Itoa(old.SievePort)})
	tb.click("#endpoint-form button.primary")
	tb.waitText("#endpoint-list", fmt.Sprintf("sieve %d", old.SievePort))
	list, err := s.Client.ListEndpointsWithResponse(context.Background())
	if err != nil || list.JSON200 == nil || len(*list.JSON200) != 1 {
		t.Fatalf("endpoints: %v %v", err, list)
	}
	src := (*list.JSON200)[0]
	if src.Sieve != (api.EndpointSieve{Port: old.SievePort, TlsMode: api.TLSModeStarttls}) {
		t.Errorf("the form stored ManageSieve as %+v", src.Sieve)
	}

	dst := s.createEndpoint(t, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain, TlsSkipVerify: true,
		Sieve: &api.EndpointSieve{Port: neu.SievePort}})
	taskID := s.createTask(t, "scripts", src.Id, dst)
	folderMap := map[string]string{"Projects/2024": "Archive 2024"}
	if resp, err := s.Client.UpdateTaskWithResponse(context.Background(), taskID, api.TaskInput{Name: "scripts", SourceEndpointId: src.Id,
		DestinationEndpointId: dst, Options: &api.TaskOptions{FolderMap: folderMap}}); err != nil || resp.StatusCode() != http.StatusNoContent {
		t.Fatalf("folder map: %v %v", err, resp)
	}
	if resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader("alice,a\n")); err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}
	if resp, err := s.Client.RunTaskWithResponse(context.Background(), taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	waitPassesEnded(t, s, taskID, 1)
	accounts, err := s.Client.ListAccountsWithResponse(context.Background(), taskID, &api.ListAccountsParams{})
	if err != nil || accounts.JSON200 == nil || len(*accounts.JSON200) != 1 {
		t.Fatalf("accounts: %v %v", err, accounts)
	}

	tb.open(fmt.Sprintf("#/tasks/%d/accounts/%d", taskID, (*accounts.JSON200)[0].Id))
	tb.waitText(`#account-script-list tr[data-script="rules"]`, "active")
	tb.waitText(`#account-script-list tr[data-script="rules"]`, `files into "Archive 2024" instead of "Projects/2024"`)
	tb.waitText(`#account-script-list tr[data-script="stamp"]`, "refused by the destination")
	tb.waitText(`#account-script-list tr[data-script="stamp"]`, "editheader")
	tb.waitText("#account-events", "Sieve scripts: 1 copied")
	tb.waitText(`#account-folder-list tr[data-folder="INBOX"] .refusals`, `"Holiday photos" (`)
	tb.waitText(`#account-folder-list tr[data-folder="INBOX"] .refusals`, "refused by the destination: ")
	tb.screenshot("sieve-scripts")
}
