package transfer

import (
	"slices"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// TestSieveScriptsMoveWithTheMail: three users' filters and vacation
// replies move from one Dovecot's ManageSieve to another's, by name, with
// the active one active; the folders they file into follow the folder map
// and the namespaces (INBOX.x → x), also for a folder the source lacks
// (":create"), while the same words elsewhere stay; a
// script using an extension the destination lacks is refused in its words
// while all the mail arrives; a re-run puts nothing, and a script the
// destination holds alone is left.
func TestSieveScriptsMoveWithTheMail(t *testing.T) {
	t.Parallel()
	users := map[string]string{"alice": "pw-a", "bob": "pw-b", "carol": "pw-c"}
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: users, ManageSieve: true, SieveExtensions: "+editheader"})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users, ManageSieve: true})
	const (
		aliceFilters = "require [\"fileinto\", \"mailbox\"];\r\n" +
			"if header :contains \"subject\" \"INBOX.Projects\" { fileinto \"INBOX.Projects.2024.Q2\"; }\r\n" +
			"elsif header :contains \"list-id\" \"projects\" { fileinto \"INBOX.Projects\"; }\r\n" +
			"elsif header :contains \"list-id\" \"golang\" { fileinto :create \"INBOX.Lists.Go\"; }\r\n"
		aliceVacation = "require \"vacation\";\r\nvacation :days 7 text:\r\nAway until Monday; mail to INBOX.Projects waits.\r\n.\r\n;\r\n"
		bobHeaders    = "require \"editheader\";\r\naddheader \"X-Moved\" \"yes\";\r\n"
		bobSpam       = "require \"fileinto\";\r\nif header :contains \"x-spam\" \"yes\" { fileinto \"INBOX.Junk\"; }\r\n"
	)
	src.WriteScript(t, "alice", "filters", aliceFilters, true)
	src.WriteScript(t, "alice", "vacation", aliceVacation, false)
	src.WriteScript(t, "bob", "headers", bobHeaders, false)
	src.WriteScript(t, "bob", "spam", bobSpam, true)
	for _, name := range []string{"a", "b", "c"} {
		src.WriteScript(t, "carol", name, "keep; # "+name+"\r\n", name == "b")
	}
	corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 3, Messages: 40})
	jobs := map[string]Job{}
	for login, password := range users {
		src.Load(t, login, corpus)
		job := Job{Source: dovecotSide(src, login, password), Destination: dovecotSide(dst, login, password),
			State: syncstate.NewMemoryState(), Logger: debugLogger()}
		job.Source.Sieve = imapconn.SieveService{Port: src.SievePort, Security: imapconn.SecurityStartTLS}
		job.Destination.Sieve = imapconn.SieveService{Port: dst.SievePort, Security: imapconn.SecurityStartTLS}
		job.Source.RootCAs, job.Destination.RootCAs = src.RootCAs(), dst.RootCAs()
		job.Options.FolderMap = map[string]string{"INBOX.Projects.2024.Q2": "Q2 of 2024"}
		jobs[login] = job
	}

	// The plan checks every script with the destination and writes none.
	plan, err := Plan(t.Context(), jobs["bob"])
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Scripts; s == nil || !slices.Equal(s.Copied, []string{"spam"}) || len(s.Refused) != 1 || s.Refused[0].Script != "headers" || s.Active != "spam" {
		t.Errorf("bob's plan of scripts: %+v", plan.Scripts)
	}
	if !slices.ContainsFunc(plan.Problems, func(p PlanProblem) bool {
		return p.Kind == ProblemSieveScript && !p.Blocking && strings.Contains(p.Words, `Sieve script "headers"`) && strings.Contains(p.Words, "editheader")
	}) {
		t.Errorf("bob's plan does not warn of the refused script: %+v", plan.Problems)
	}
	if scripts, active := dst.Scripts(t, "bob"); len(scripts) != 0 || active != "" {
		t.Errorf("the plan wrote scripts: %q, active %q", scripts, active)
	}

	results := map[string]Result{}
	for login, job := range jobs {
		results[login] = migrateVerified(t, job)
		wantSameMail(t, movedFolder(src.Read(t, login), "Projects/2024/Q2", "Q2 of 2024"), dst.Read(t, login))
	}
	junk := destinationOf(results["bob"], "INBOX.Junk")
	if junk == "" || junk == "INBOX.Junk" {
		t.Fatalf("the plan put INBOX.Junk at %q", junk)
	}

	alice, active := dst.Scripts(t, "alice")
	wantFilters := strings.NewReplacer(`fileinto "INBOX.Projects.2024.Q2"`, `fileinto "Q2 of 2024"`, `fileinto "INBOX.Projects"`, `fileinto "Projects"`,
		`:create "INBOX.Lists.Go"`, `:create "Lists/Go"`).Replace(aliceFilters)
	if alice["filters"] != wantFilters || alice["vacation"] != aliceVacation || active != "filters" {
		t.Errorf("alice's scripts on the destination, active %q:\n%q\nwant:\n%q", active, alice, wantFilters)
	}
	if got := results["alice"].Scripts; got == nil || len(got.Renamed) != 3 || !slices.Equal(got.Copied, []string{"filters", "vacation"}) || got.Active != "filters" {
		t.Errorf("alice's scripts result: %+v", got)
	}

	bob, active := dst.Scripts(t, "bob")
	if _, ok := bob["headers"]; ok || active != "spam" || bob["spam"] != strings.Replace(bobSpam, `"INBOX.Junk"`, `"`+junk+`"`, 1) {
		t.Errorf("bob's scripts on the destination, active %q: %q", active, bob)
	}
	refused := results["bob"].Scripts.Refused
	if len(refused) != 1 || refused[0].Script != "headers" || !strings.Contains(refused[0].Reason, "editheader") {
		t.Errorf("bob's refused scripts: %+v, want headers refused in the server's words naming editheader", refused)
	}

	carol, active := dst.Scripts(t, "carol")
	if len(carol) != 3 || active != "b" || carol["c"] != "keep; # c\r\n" {
		t.Errorf("carol's scripts on the destination, active %q: %q", active, carol)
	}

	// The destination's own script stays; a re-run puts nothing.
	dst.WriteScript(t, "carol", "mine", "discard;\r\n", false)
	for login, job := range jobs {
		again := migrateVerified(t, job).Scripts
		if again == nil || len(again.Copied) != 0 || again.Error != "" {
			t.Errorf("%s's re-run moved scripts again: %+v", login, again)
		}
	}
	if carol, _ = dst.Scripts(t, "carol"); carol["mine"] != "discard;\r\n" {
		t.Errorf("the destination's own script is gone or changed: %q", carol)
	}
}

// destinationOf is where a run put a source folder.
func destinationOf(res Result, source string) string {
	for _, f := range res.Folders {
		if f.Source == source {
			return f.Destination
		}
	}
	return ""
}

// movedFolder is c with folder's messages in to, as a folder map moves
// them.
func movedFolder(c imaptest.Corpus, folder, to string) imaptest.Corpus {
	for i := range c.Folders {
		if c.Folders[i].Name == folder {
			c.Folders[i].Name = to
		}
	}
	for i := range c.Messages {
		if c.Messages[i].Folder == folder {
			c.Messages[i].Folder = to
		}
	}
	return c
}

// TestScriptsWithoutManageSieveLeaveTheMailAlone: a destination whose
// ManageSieve does not answer, a port that answers something else (IMAP),
// or an endpoint that names none: the plan says so, and the destination
// gets all the mail; the scripts' result says why they stayed.
func TestScriptsWithoutManageSieveLeaveTheMailAlone(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Users: map[string]string{"alice": "pw"}, ManageSieve: true})
	dst := imaptest.StartDovecot(t, imaptest.Options{Users: map[string]string{"alice": "pw"}})
	src.WriteScript(t, "alice", "filters", "keep;\r\n", true)
	src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 5, Messages: 20}))
	for _, c := range []struct {
		name    string
		service imapconn.SieveService
		want    string
	}{
		{"nothing listens", imapconn.SieveService{Port: closedPort(t), Security: imapconn.SecurityStartTLS}, "destination ManageSieve"},
		{"not ManageSieve", imapconn.SieveService{Port: dst.Port, Security: imapconn.SecurityStartTLS}, "the server does not speak ManageSieve: it said \"* OK"},
		{"none named", imapconn.SieveService{}, "names no ManageSieve service"},
	} {
		job := Job{Source: dovecotSide(src, "alice", "pw"), Destination: dovecotSide(dst, "alice", "pw"), State: syncstate.NewMemoryState()}
		job.Source.Sieve = imapconn.SieveService{Port: src.SievePort, Security: imapconn.SecurityStartTLS}
		job.Source.RootCAs = src.RootCAs()
		job.Destination.Sieve = c.service
		plan, err := Plan(t.Context(), job)
		if err != nil || !slices.ContainsFunc(plan.Problems, func(p PlanProblem) bool {
			return p.Kind == ProblemSieveScript && strings.Contains(p.Words, "the Sieve scripts cannot move: ") && strings.Contains(p.Words, c.want)
		}) {
			t.Errorf("%s: the plan (%v) does not say the scripts cannot move: %+v", c.name, err, plan.Problems)
		}
		res := migrateVerified(t, job)
		if res.Scripts == nil || !strings.Contains(res.Scripts.Error, c.want) {
			t.Errorf("%s: scripts result %+v, want an error naming %q", c.name, res.Scripts, c.want)
		}
		wantSameMail(t, src.Read(t, "alice"), dst.Read(t, "alice"))
	}
}

// TestSieveEditsOnTheDestinationAreKept: after a first pass, the user
// makes another script active on the new server, then edits a filter
// there; later passes bring the source's changes to the other scripts but
// keep the user's choice of active script and filter, and say so; a filter
// changed on both servers keeps the destination's too.
func TestSieveEditsOnTheDestinationAreKept(t *testing.T) {
	t.Parallel()
	users := map[string]string{"alice": "pw"}
	src := imaptest.StartDovecot(t, imaptest.Options{Users: users, ManageSieve: true})
	dst := imaptest.StartDovecot(t, imaptest.Options{Users: users, ManageSieve: true})
	const (
		filters     = "require \"fileinto\";\r\nif header :contains \"list-id\" \"go\" { fileinto \"Lists\"; }\r\n"
		userFilters = "require \"fileinto\";\r\nif header :contains \"list-id\" \"go\" { fileinto \"Go\"; }\r\n"
		away        = "require \"vacation\";\r\nvacation \"Away.\";\r\n"
		awayLonger  = "require \"vacation\";\r\nvacation :days 9 \"Away for longer.\";\r\n"
	)
	src.WriteScript(t, "alice", "filters", filters, true)
	src.WriteScript(t, "alice", "away", away, false)
	src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 2, Messages: 10}))
	job := Job{Source: dovecotSide(src, "alice", "pw"), Destination: dovecotSide(dst, "alice", "pw"), State: syncstate.NewMemoryState()}
	job.Source.Sieve = imapconn.SieveService{Port: src.SievePort, Security: imapconn.SecurityStartTLS}
	job.Destination.Sieve = imapconn.SieveService{Port: dst.SievePort, Security: imapconn.SecurityStartTLS}
	job.Source.RootCAs, job.Destination.RootCAs = src.RootCAs(), dst.RootCAs()
	if first := migrateVerified(t, job).Scripts; first == nil || len(first.Copied) != 2 || first.Active != "filters" {
		t.Fatalf("first pass: %+v", first)
	}

	// The user turns the vacation reply on, on the new server alone.
	dst.WriteScript(t, "alice", "away", away, true)
	second := migrateVerified(t, job).Scripts
	if second == nil || len(second.Copied) != 0 || !slices.Equal(second.Kept, []ScriptRefusal{{"filters", activeChanged}}) {
		t.Errorf("second pass: %+v", second)
	}
	if _, active := dst.Scripts(t, "alice"); active != "away" {
		t.Errorf("after the second pass the destination's active script is %q, want the user's choice", active)
	}

	// The user edits the filter on the new server; the vacation text
	// changes on the old one.
	dst.WriteScript(t, "alice", "filters", userFilters, false)
	src.WriteScript(t, "alice", "away", awayLonger, false)
	third := migrateVerified(t, job).Scripts
	if third == nil || !slices.Equal(third.Copied, []string{"away"}) || !slices.Equal(third.Kept, []ScriptRefusal{{"filters", editedOnDestination}}) {
		t.Errorf("third pass: %+v", third)
	}
	scripts, active := dst.Scripts(t, "alice")
	if scripts["filters"] != userFilters || scripts["away"] != awayLonger || active != "away" {
		t.Errorf("after the third pass the destination has %q, active %q", scripts, active)
	}

	src.WriteScript(t, "alice", "filters", filters+"# and more\r\n", true)
	fourth := migrateVerified(t, job).Scripts
	if fourth == nil || len(fourth.Copied) != 0 || !slices.Equal(fourth.Kept, []ScriptRefusal{{"filters", editedOnBoth}}) {
		t.Errorf("fourth pass: %+v", fourth)
	}
	if scripts, _ := dst.Scripts(t, "alice"); scripts["filters"] != userFilters {
		t.Errorf("a filter changed on both servers was overwritten: %q", scripts["filters"])
	}
}

// TestSieveScriptsWithMasterLogins: an administrator logs in to each
// side's ManageSieve on the account's behalf, in both forms (SASL PLAIN
// for the account, and "account*master"), as the IMAP side does.
func TestSieveScriptsWithMasterLogins(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Users: map[string]string{"alice": "hers"},
		MasterUsers: map[string]string{"admin": "master-pw"}, ManageSieve: true})
	dst := imaptest.StartDovecot(t, imaptest.Options{Users: map[string]string{"alice": "unknown", "alice2": "unknown"},
		MasterUsers: map[string]string{"migrator": "other-pw"}, ManageSieve: true})
	src.WriteScript(t, "alice", "filters", "keep;\r\n", true)
	src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 8, Messages: 10}))
	source := dovecotSide(src, "alice", "master-pw")
	source.Master, source.MasterForm = "admin", imapconn.MasterAuthzid
	source.Sieve, source.RootCAs = imapconn.SieveService{Port: src.SievePort, Security: imapconn.SecurityStartTLS}, src.RootCAs()
	destination := dovecotSide(dst, "alice", "other-pw")
	destination.Master, destination.MasterForm = "migrator", imapconn.MasterSeparator
	destination.Sieve, destination.RootCAs = imapconn.SieveService{Port: dst.SievePort, Security: imapconn.SecurityStartTLS}, dst.RootCAs()
	for _, login := range []string{"alice", "alice2"} {
		destination.Login = login
		res := migrateVerified(t, Job{Source: source, Destination: destination, State: syncstate.NewMemoryState()})
		if res.Scripts == nil || res.Scripts.Error != "" || !slices.Equal(res.Scripts.Copied, []string{"filters"}) {
			t.Errorf("into %s (%s on the source, %s on the destination): %+v", login, source.MasterForm, destination.MasterForm, res.Scripts)
		}
		if scripts, active := dst.Scripts(t, login); scripts["filters"] != "keep;\r\n" || active != "filters" {
			t.Errorf("%s's scripts on the destination: %q, active %q", login, scripts, active)
		}
		source.MasterForm, destination.MasterForm = imapconn.MasterSeparator, imapconn.MasterAuthzid
	}
}
