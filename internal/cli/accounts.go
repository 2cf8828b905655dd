package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// Variables that may hold the passwords of accounts create and update,
// so that they appear neither in ps nor in the shell's history.
const (
	sourcePasswordEnv      = "MAILMIGRATE_SOURCE_PASSWORD"
	destinationPasswordEnv = "MAILMIGRATE_DESTINATION_PASSWORD"
)

func accountCommands() []command {
	return []command{
		{"list", "TASK", "List a task's accounts", accountsList},
		{"get", "TASK ID", "Show one account", accountsGet},
		{"create", "TASK", "Add an account to a task; prints its id", accountsCreate},
		{"update", "TASK ID", "Change the given fields of an account", accountsUpdate},
		{"delete", "TASK ID", "Delete an account", accountsDelete},
		{"import", "TASK FILE.csv", "Add accounts from CSV (- for stdin), all or nothing", accountsImport},
		{"run", "TASK ID", "Migrate one account again, e.g. after fixing its password, also while others run (--follow: show the progress)", accountsRun},
		{"cancel", "TASK ID", "Stop one account of a pass; the others go on", accountsCancel},
		{"passes", "TASK ID", "List what each pass did for one account", accountsPasses},
		{"runs", "TASK ID", "The old name of passes", accountsPasses},
		{"folders", "TASK ID", "List one account's folders: where each goes, counts, refused messages", accountsFolders},
		{"plan", "TASK ID", "Show one account's newest plan (dry run), whole: each folder's plan, what is too large, problems (exit 1 if blocked)", accountsPlan},
		{"authorize", "TASK ID", "Get an account its OAuth 2.0 refresh token: prints the provider's page and a code, or its sign-in address, and waits for the sign-in", accountsAuthorize},
	}
}

func accountsCancel(ctx context.Context, s *session, args []string) error {
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	resp, err := s.client.CancelAccountWithResponse(ctx, taskID, id)
	return expect(resp, err, http.StatusAccepted)
}

func accountsRun(ctx context.Context, s *session, args []string) error {
	var ff followFlags
	ff.bind(s.flags, followRunHelp)
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	return startAndFollow(ctx, s, taskID, ff, "attempt of account "+itoa(id), false, func() (response, error) {
		return s.client.RunAccountWithResponse(ctx, taskID, id)
	})
}

func accountsList(ctx context.Context, s *session, args []string) error {
	states := s.flags.String("state", "", "only accounts in these states, comma-separated, e.g. failed,canceled")
	search := s.flags.String("search", "", "only accounts with this text in the source or destination login, in any case")
	loginTest := s.flags.String("login-test", "", "only accounts whose last login test passed, failed, or is untested")
	sort := s.flags.String("sort", "id", "id, login, state (running first), progress or updated; -login etc. reverse")
	limit := s.flags.Int("limit", 0, "at most this many accounts; 0: all")
	taskID, err := s.parseOneID(args, "TASK")
	if err != nil {
		return err
	}
	params := api.ListAccountsParams{Sort: (*api.AccountSort)(sort)}
	if list := splitStates(*states); len(list) > 0 {
		params.State = &list
	}
	if *search != "" {
		params.Q = search
	}
	if *loginTest != "" {
		params.LoginTest = (*api.LoginTestFilter)(loginTest)
	}
	if *limit < 0 {
		return s.usageErrorf("--limit %d: want 0 (all) or more", *limit)
	}
	accounts, err := queryAccounts(ctx, s, taskID, params, *limit)
	if err != nil {
		return err
	}
	return s.printOutput(accounts, func() error {
		rows := make([][]string, 0, len(accounts))
		for _, a := range accounts {
			p := a.Progress
			rows = append(rows, []string{itoa(a.Id), a.SourceLogin, a.DestinationLogin, string(a.State), testText(a.SourceTest),
				testText(a.DestinationTest), fmt.Sprintf("%d/%d", messagesDone(p), messagesTotal(p)), megabytes(p.BytesCopied), orDash(a.LastError)})
		}
		return s.printTable([]string{"ID", "SOURCE LOGIN", "DESTINATION LOGIN", "STATE", "SOURCE TEST", "DESTINATION TEST", "MESSAGES", "MB", "LAST ERROR"}, rows)
	})
}

// parseTaskAndAccount parses the flags and the positional TASK ID.
func (s *session) parseTaskAndAccount(args []string) (taskID, id int64, err error) {
	pos, err := s.parse(args, 2)
	if err != nil {
		return 0, 0, err
	}
	if taskID, err = s.parseID("TASK", pos[0]); err != nil {
		return 0, 0, err
	}
	id, err = s.parseID("ID", pos[1])
	return taskID, id, err
}

func accountsGet(ctx context.Context, s *session, args []string) error {
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	a, err := getAccount(ctx, s, taskID, id)
	if err != nil {
		return err
	}
	return s.printOutput(a, func() error {
		p := a.Progress
		state := string(a.State)
		if a.PausedUntil != nil {
			// A parked account (a daily budget spent) says why in its last
			// error; a throttled attempt's pause is the server's asking.
			state += ", paused until " + timeOrDash(a.PausedUntil) + " (" + cmp.Or(a.LastError, "a server asks to slow down") + ")"
		}
		return s.printFields([][2]string{
			{"ID", itoa(a.Id)}, {"Task", itoa(a.TaskId)}, {"Source login", a.SourceLogin}, {"Destination login", a.DestinationLogin},
			{"State", state}, {"Source test", testText(a.SourceTest)}, {"Destination test", testText(a.DestinationTest)},
			{"Folders", fmt.Sprintf("%d/%d", p.FoldersDone, p.FoldersTotal)},
			{"Messages", fmt.Sprintf("%d of %d: %d copied, %d skipped, %d failed", messagesDone(p), messagesTotal(p), p.MessagesCopied, p.MessagesSkipped, p.MessagesFailed)},
			{"Copied", megabytes(p.BytesCopied) + " MB"}, {"Last error", orDash(a.LastError)},
			{"Started", timeOrDash(a.StartedAt)}, {"Finished", timeOrDash(a.FinishedAt)},
			{"Sieve scripts", scriptsText(a.Scripts)},
		})
	})
}

// scriptsText is what became of an account's Sieve scripts, in the
// service's own words.
func scriptsText(s *api.AccountScripts) string {
	if s == nil {
		return "-"
	}
	return s.Summary
}

// accountFlags binds an account's logins and password sources to flags.
type accountFlags struct {
	input                   api.AccountInput
	sourcePasswordFile      string
	destinationPasswordFile string
}

func (af *accountFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&af.input.SourceLogin, "source-login", "", "login on the source server")
	fs.StringVar(&af.input.DestinationLogin, "destination-login", "", "login on the destination server; default: the source login")
	fs.StringVar(&af.sourcePasswordFile, "source-password-file", "",
		"file holding the source password, - for stdin; default: the variable "+sourcePasswordEnv)
	fs.StringVar(&af.destinationPasswordFile, "destination-password-file", "",
		"file holding the destination password, - for stdin; default: the variable "+destinationPasswordEnv+", else the source password")
}

// readPasswords fills in the passwords from their files or variables.
func (af *accountFlags) readPasswords(s *session) error {
	if af.sourcePasswordFile == "-" && af.destinationPasswordFile == "-" {
		return s.usageErrorf("only one password can come from stdin")
	}
	var err error
	if af.input.SourcePassword, err = s.readSecret(af.sourcePasswordFile, sourcePasswordEnv); err != nil {
		return err
	}
	af.input.DestinationPassword, err = s.readSecret(af.destinationPasswordFile, destinationPasswordEnv)
	return err
}

func accountsCreate(ctx context.Context, s *session, args []string) error {
	var af accountFlags
	af.bind(s.flags)
	taskID, err := s.parseOneID(args, "TASK")
	if err != nil {
		return err
	}
	if err := af.readPasswords(s); err != nil {
		return err
	}
	// The password may be left out where the endpoint has a master
	// login: the service says when one is needed.
	if af.input.SourceLogin == "" {
		return s.usageErrorf("want --source-login, and a source password (--source-password-file or %s) unless the source has a master login", sourcePasswordEnv)
	}
	resp, err := s.client.CreateAccountWithResponse(ctx, taskID, af.input)
	if err := expect(resp, err, http.StatusCreated); err != nil {
		return err
	}
	return s.printCreated(resp.JSON201.Id)
}

// accountsUpdate changes the logins given as flags and the passwords
// given as files or variables; the server keeps a password left empty.
func accountsUpdate(ctx context.Context, s *session, args []string) error {
	var af accountFlags
	af.bind(s.flags)
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	if err := af.readPasswords(s); err != nil {
		return err
	}
	current, err := getAccount(ctx, s, taskID, id)
	if err != nil {
		return err
	}
	in := af.input
	if in.SourceLogin == "" {
		in.SourceLogin = current.SourceLogin
	}
	if in.DestinationLogin == "" {
		in.DestinationLogin = current.DestinationLogin
	}
	resp, err := s.client.UpdateAccountWithResponse(ctx, taskID, id, in)
	return expect(resp, err, http.StatusNoContent)
}

func accountsDelete(ctx context.Context, s *session, args []string) error {
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	resp, err := s.client.DeleteAccountWithResponse(ctx, taskID, id)
	return expect(resp, err, http.StatusNoContent)
}

func accountsImport(ctx context.Context, s *session, args []string) error {
	pos, err := s.parse(args, 2)
	if err != nil {
		return err
	}
	taskID, err := s.parseID("TASK", pos[0])
	if err != nil {
		return err
	}
	body, closeBody, err := s.openInput(pos[1])
	if err != nil {
		return err
	}
	defer closeBody()
	resp, err := s.client.ImportAccountsWithBodyWithResponse(ctx, taskID, "text/csv", body)
	if err := expect(resp, err, http.StatusCreated); err != nil {
		return err
	}
	return s.printOutput(resp.JSON201, func() error {
		_, err := fmt.Fprintf(s.sys.Stdout, "%d accounts added to task %d\n", resp.JSON201.Created, taskID)
		return err
	})
}

// openInput opens a file named on the command line, "-" being stdin.
func (s *session) openInput(name string) (io.Reader, func(), error) {
	if name == "-" {
		return s.sys.Stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func getAccount(ctx context.Context, s *session, taskID, id int64) (api.Account, error) {
	resp, err := s.client.GetAccountWithResponse(ctx, taskID, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return api.Account{}, err
	}
	return *resp.JSON200, nil
}

func listAccounts(ctx context.Context, s *session, taskID int64) ([]api.Account, error) {
	return queryAccounts(ctx, s, taskID, api.ListAccountsParams{}, 0)
}

// accountsPageSize is how many accounts a listing asks for at a time.
const accountsPageSize = 1000

// queryAccounts lists the accounts params select, at most limit of them
// (0: all), a page at a time along the service's next links.
func queryAccounts(ctx context.Context, s *session, taskID int64, params api.ListAccountsParams, limit int) ([]api.Account, error) {
	accounts := []api.Account{} // [] in JSON, not null
	for {
		pageSize := accountsPageSize
		if limit > 0 {
			pageSize = min(pageSize, limit-len(accounts))
		}
		params.Limit = &pageSize
		resp, err := s.client.ListAccountsWithResponse(ctx, taskID, &params)
		if err := expect(resp, err, http.StatusOK); err != nil {
			return nil, err
		}
		accounts = append(accounts, *resp.JSON200...)
		next := nextCursor(resp.HTTPResponse.Header.Get("Link"))
		if next == "" || (limit > 0 && len(accounts) >= limit) {
			return accounts, nil
		}
		params.Cursor = &next
	}
}

// nextCursor is the cursor in a Link header's rel="next" URL, or "".
func nextCursor(link string) string {
	target, ok := strings.CutSuffix(link, `>; rel="next"`)
	if !ok || !strings.HasPrefix(target, "<") {
		return ""
	}
	next, err := url.Parse(target[1:])
	if err != nil {
		return ""
	}
	return next.Query().Get("cursor")
}
