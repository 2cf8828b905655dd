package app_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// taskReportRows are the rows of the task's report, its header first.
func taskReportRows(t *testing.T, s *servicetest.Service, taskID int64) [][]string {
	t.Helper()
	report, err := s.Client.GetTaskReportWithResponse(context.Background(), taskID)
	if err != nil || report.StatusCode() != http.StatusOK {
		t.Fatalf("report: %v %v", err, report)
	}
	rows, err := csv.NewReader(strings.NewReader(string(report.Body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestSieveScriptsMoveThroughTheService: a task between two Dovecots with
// ManageSieve, three users of two or three scripts each. After a pass
// every script is on the destination by name, the active one active; the
// folder a script files into follows the task's folder map; the script
// using an extension the destination lacks is refused in the server's
// words, in the account's record, a scripts.done event and the report,
// while all the mail is copied, and the plan warned of it before; a pass
// that looks again puts nothing.
func TestSieveScriptsMoveThroughTheService(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{})
	ctx := context.Background()
	users := map[string]string{"ann": "ann-pw", "bob": "bob-pw", "cid": "cid-pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, ManageSieve: true, SieveExtensions: "+editheader"})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, ManageSieve: true})
	const (
		annLists  = "require \"fileinto\";\r\nif header :contains \"list-id\" \"golang\" { fileinto \"Projects/2024\"; }\r\n"
		annAway   = "require \"vacation\";\r\nvacation :days 5 \"Projects/2024 waits until Monday.\";\r\n"
		bobHeader = "require \"editheader\";\r\naddheader \"X-Moved\" \"yes\";\r\n"
		bobSpam   = "require \"fileinto\";\r\nif header :is \"x-spam\" \"yes\" { fileinto \"Junk\"; }\r\n"
	)
	old.WriteScript(t, "ann", "lists", annLists, true)
	old.WriteScript(t, "ann", "away", annAway, false)
	old.WriteScript(t, "bob", "header", bobHeader, false)
	old.WriteScript(t, "bob", "spam", bobSpam, true)
	for _, name := range []string{"one", "two", "three"} {
		old.WriteScript(t, "cid", name, "keep; # "+name+"\r\n", name == "two")
	}
	for i, login := range []string{"ann", "bob", "cid"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 12}))
	}
	endpoint := func(d *imaptest.Dovecot) int64 {
		resp, err := s.Client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: d.Host, Port: d.Port, TlsMode: api.TLSModePlain,
			TlsSkipVerify: true, Sieve: &api.EndpointSieve{Port: d.SievePort}})
		if err != nil || resp.JSON201 == nil {
			t.Fatalf("create endpoint: %v %v", err, resp)
		}
		got, err := s.Client.GetEndpointWithResponse(ctx, resp.JSON201.Id)
		if err != nil || got.JSON200 == nil || got.JSON200.Sieve.Port != d.SievePort || got.JSON200.Sieve.TlsMode != api.TLSModeStarttls {
			t.Errorf("the endpoint's ManageSieve is %v %v, want port %d with starttls by default", err, got, d.SievePort)
		}
		return resp.JSON201.Id
	}
	taskID := createTask(t, s, endpoint(old), endpoint(neu), `{"folder_map":{"Projects/2024":"Archive 2024"}}`)
	importAccounts(t, s, taskID, "ann,ann-pw,ann,ann-pw\nbob,bob-pw,bob,bob-pw\ncid,cid-pw,cid,cid-pw\n")
	pass := func(n int, verify bool) map[string]api.Account {
		t.Helper()
		if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, &api.RunTaskParams{Verify: &verify}, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
			t.Fatalf("run: %v %v", err, resp)
		}
		if run := waitPasses(t, s, taskID, n)[n-1]; run.AccountsCompleted != 3 {
			t.Errorf("pass %d: %d accounts completed, want 3", n, run.AccountsCompleted)
		}
		resp, err := s.Client.ListAccountsWithResponse(ctx, taskID, &api.ListAccountsParams{})
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("list accounts: %v %v", err, resp)
		}
		accounts := map[string]api.Account{}
		for _, a := range *resp.JSON200 {
			accounts[a.SourceLogin] = a
		}
		return accounts
	}

	// The plan warns before the first pass, and writes nothing.
	if resp, err := s.Client.PlanTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.JSON202 == nil {
		t.Fatalf("plan: %v %v", err, resp)
	}
	waitPlans(t, s, taskID, 3)
	ids := accountIDs(t, s, taskID)
	bobPlan, err := s.Client.GetAccountPlanWithResponse(ctx, taskID, ids["bob"])
	if err != nil || bobPlan.JSON200 == nil || bobPlan.JSON200.Plan == nil || bobPlan.JSON200.Plan.Scripts == nil {
		t.Fatalf("bob's plan: %v %v", err, bobPlan)
	}
	if p := bobPlan.JSON200.Plan; !slices.Equal(p.Scripts.Copied, []string{"spam"}) || len(p.Scripts.Refused) != 1 ||
		!strings.HasPrefix(p.Scripts.Summary, "1 to copy; 0 unchanged; 1 refused: header (") ||
		!slices.ContainsFunc(p.Problems, func(problem api.PlanProblem) bool {
			return problem.Kind == api.PlanProblemKindSieveScript && !problem.Blocking && strings.Contains(problem.Words, "editheader")
		}) {
		t.Errorf("bob's plan of scripts: %+v, problems %+v", p.Scripts, p.Problems)
	}
	if scripts, _ := neu.Scripts(t, "bob"); len(scripts) != 0 {
		t.Errorf("the plan wrote scripts: %q", scripts)
	}

	accounts := pass(1, false)
	for login := range users {
		want := old.Read(t, login)
		for i := range want.Folders { // the folder map's one rename
			if want.Folders[i].Name == "Projects/2024" {
				want.Folders[i].Name = "Archive 2024"
			}
		}
		for i := range want.Messages {
			if want.Messages[i].Folder == "Projects/2024" {
				want.Messages[i].Folder = "Archive 2024"
			}
		}
		if diff := imaptest.Diff(want, neu.Read(t, login)); len(diff) > 0 {
			t.Errorf("%s's mail on the destination differs from the source's:\n%s", login, strings.Join(diff, "\n"))
		}
	}
	scripts, active := neu.Scripts(t, "ann")
	if want := strings.Replace(annLists, `"Projects/2024"`, `"Archive 2024"`, 1); scripts["lists"] != want || scripts["away"] != annAway || active != "lists" {
		t.Errorf("ann's scripts on the destination (active %q): %q", active, scripts)
	}
	if ann := accounts["ann"].Scripts; ann == nil || !slices.Equal(ann.Copied, []string{"away", "lists"}) || ann.Active != "lists" ||
		len(ann.Renamed) != 1 || ann.Renamed[0] != (api.ScriptRename{Script: "lists", From: "Projects/2024", To: "Archive 2024"}) {
		t.Errorf("ann's scripts record: %+v", ann)
	}
	scripts, active = neu.Scripts(t, "bob")
	if _, ok := scripts["header"]; ok || scripts["spam"] != bobSpam || active != "spam" {
		t.Errorf("bob's scripts on the destination (active %q): %q", active, scripts)
	}
	bob := accounts["bob"].Scripts
	if bob == nil || len(bob.Refused) != 1 || bob.Refused[0].Script != "header" || !strings.Contains(bob.Refused[0].Reason, "editheader") {
		t.Fatalf("bob's scripts record: %+v, want header refused in the server's words", bob)
	}
	if accounts["bob"].State != api.AccountStateCompleted {
		t.Errorf("a refused script changed bob's account to %s: the messages all arrived", accounts["bob"].State)
	}
	if scripts, active = neu.Scripts(t, "cid"); len(scripts) != 3 || active != "two" {
		t.Errorf("cid's scripts on the destination (active %q): %q", active, scripts)
	}

	events, err := s.Client.ListAccountEventsWithResponse(ctx, taskID, accounts["bob"].Id, &api.ListAccountEventsParams{})
	if err != nil || events.JSON200 == nil {
		t.Fatalf("bob's events: %v %v", err, events)
	}
	i := slices.IndexFunc(*events.JSON200, func(e api.Event) bool { return e.Kind == api.EventKindScriptsDone })
	if i < 0 || !strings.Contains((*events.JSON200)[i].Error, "editheader") || !strings.Contains((*events.JSON200)[i].Message, "1 copied") {
		t.Errorf("bob's scripts.done event: %+v", *events.JSON200)
	}
	rows := taskReportRows(t, s, taskID)
	column := slices.Index(rows[0], "sieve_scripts")
	if column < 0 || !slices.ContainsFunc(rows[1:], func(row []string) bool {
		return row[1] == "bob" && strings.Contains(row[column], "1 refused: header (") && strings.Contains(row[column], "active: spam")
	}) {
		t.Errorf("the report does not tell bob's scripts: %q", rows)
	}

	// A pass that looks at both servers puts nothing: every script is
	// there as it was. (A delta pass that ends at an unchanged source
	// leaves the scripts to the next pass that opens the destination.)
	for login, a := range pass(2, true) {
		if a.Scripts == nil || len(a.Scripts.Copied) != 0 || len(a.Scripts.Unchanged) == 0 || a.Scripts.Error != "" {
			t.Errorf("%s's verifying pass moved scripts again: %+v", login, a.Scripts)
		}
	}
}
