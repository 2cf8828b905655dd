package cli_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
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

// TestUpdateChangesOnlyTheGivenFieldsAndDeleteDeletes: PUT replaces whole
// records, so update reads the record first; delete removes what it names.
func TestUpdateChangesOnlyTheGivenFieldsAndDeleteDeletes(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	ep := u.id("endpoints", "create", "--host", "imap.old.example", "--role-label", "old", "--tls-mode", "starttls", "--tls-skip-verify", "--profile", "exchange",
		"--max-connections", "4", "--daily-upload-bytes", "500000000", "--sieve-port", "4190")
	u.ok("endpoints", "update", ep, "--port", "1143", "--max-account-connections", "2", "--sieve-tls-mode", "ssl")
	var endpoint api.Endpoint
	decodeJSON(t, u.ok("endpoints", "get", ep, "--output", "json"), &endpoint)
	if endpoint.Port != 1143 || endpoint.Host != "imap.old.example" || endpoint.RoleLabel != "old" ||
		endpoint.TlsMode != api.TLSModeStarttls || !endpoint.TlsSkipVerify || endpoint.Profile != api.ProfileExchange ||
		endpoint.Limits != (api.EndpointLimits{Connections: 4, AccountConnections: 2, DailyUploadBytes: 500000000}) ||
		endpoint.Sieve != (api.EndpointSieve{Port: 4190, TlsMode: api.TLSModeSsl}) {
		t.Errorf("endpoint after update --port --max-account-connections: %+v", endpoint)
	}
	if out := u.ok("endpoints", "get", ep); !strings.Contains(out, "daily upload 500000000, connections 4, per mailbox 2; otherwise the provider's") ||
		!strings.Contains(out, "ManageSieve on port 4190, ssl") {
		t.Errorf("endpoints get does not list the endpoint's own limits:\n%s", out)
	}

	dst := u.id("endpoints", "create", "--host", "imap.new.example")
	task := u.id("tasks", "create", "--name", "n", "--source", ep, "--destination", dst,
		"--include-folder", "^INBOX", "--include-folder", "^Archive", "--folder-map", "Sent Items=Sent", "--since", "2024-01-01", "--gmail-labels", "keywords", "--verify-copies", "counts")
	u.ok("tasks", "update", task, "--name", "renamed", "--include-folder", "^Projects")
	var got api.Task
	decodeJSON(t, u.ok("tasks", "get", task, "--output", "json"), &got)
	o := got.Options
	if got.Name != "renamed" || strings.Join(o.IncludeFolders, " ") != "^Projects" || o.FolderMap["Sent Items"] != "Sent" || o.Since != "2024-01-01" ||
		o.GmailLabels != api.GmailLabelsKeywords || o.VerifyCopies != api.VerifyCopiesCounts {
		t.Errorf("task after update: %+v", got)
	}

	u.env["MAILMIGRATE_SOURCE_PASSWORD"] = "pw"
	alice := u.id("accounts", "create", task, "--source-login", "alice")
	var bob api.Created
	decodeJSON(t, u.ok("accounts", "create", task, "--source-login", "bob", "--output", "json"), &bob)
	if bob.Id == 0 {
		t.Errorf("create --output json printed no id")
	}
	u.ok("accounts", "delete", task, alice)
	var accounts []api.Account
	decodeJSON(t, u.ok("accounts", "list", task, "--output", "json"), &accounts)
	if len(accounts) != 1 || accounts[0].SourceLogin != "bob" {
		t.Errorf("accounts after deleting alice: %+v", accounts)
	}

	u.ok("tasks", "delete", task)
	u.ok("endpoints", "delete", ep)
	u.ok("endpoints", "delete", dst)
	if out := u.ok("endpoints", "list", "--output", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("endpoints after delete: %s", out)
	}
	if out := u.ok("tasks", "list"); out != "ID  NAME  STATE  SOURCE  DESTINATION  ACCOUNTS  FAILED  MESSAGES  MB\n" {
		t.Errorf("empty task table: %q", out)
	}
}

// TestMasterLoginFromTheCommandLine: an endpoint takes a master login with
// its password from stdin, shows it without the password, keeps the
// password through an update of the form, and its accounts are added
// without passwords.
func TestMasterLoginFromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	u.stdin = "Master-pw-77\n"
	src := u.id("endpoints", "create", "--host", "imap.old.example", "--auth", "master", "--master-login", "admin", "--master-password-file", "-")
	if out := u.ok("endpoints", "get", src); !strings.Contains(out, "master admin (SASL PLAIN for the account)") || strings.Contains(out, "Master-pw") {
		t.Errorf("get of a master endpoint:\n%s", out)
	}
	u.ok("endpoints", "update", src, "--master-form", "separator", "--port", "1993")
	var endpoint api.Endpoint
	decodeJSON(t, u.ok("endpoints", "get", src, "--output", "json"), &endpoint)
	want := api.EndpointAuth{Method: api.AuthMethodMaster, MasterLogin: "admin", MasterForm: api.MasterFormSeparator, MasterPasswordSet: true}
	if endpoint.Auth != want || endpoint.Port != 1993 {
		t.Errorf("after update --master-form: %+v, want auth %+v", endpoint, want)
	}
	if out := u.ok("endpoints", "list"); !strings.Contains(out, "master admin (LOGIN account*admin)") {
		t.Errorf("list:\n%s", out)
	}

	u.env["MAILMIGRATE_MASTER_PASSWORD"] = "Other-master-pw"
	dst := u.id("endpoints", "create", "--host", "imap.new.example", "--master-login", "migrator")
	task := u.id("tasks", "create", "--name", "n", "--source", src, "--destination", dst)
	u.ok("accounts", "create", task, "--source-login", "alice")

	u.ok("endpoints", "update", dst, "--auth", "password")
	decodeJSON(t, u.ok("endpoints", "get", dst, "--output", "json"), &endpoint)
	if endpoint.Auth.Method != api.AuthMethodPassword || endpoint.Auth.MasterPasswordSet {
		t.Errorf("after update --auth password: %+v", endpoint.Auth)
	}
	if r := u.run("accounts", "create", task, "--source-login", "bob"); r.code == 0 || !strings.Contains(r.stderr, "destination_password must not be empty") {
		t.Errorf("an account without the destination's password once it needs one: exit %d, %s", r.code, r.stderr)
	}
}

// TestOAuth2FromTheCommandLine: an endpoint takes an OAuth 2.0 application
// from flags, its client secret from a variable; an update of one setting
// keeps the others and the secret.
func TestOAuth2FromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	u.env["MAILMIGRATE_CLIENT_SECRET"] = "Client-secret-9"
	ep := u.id("endpoints", "create", "--host", "outlook.office365.com", "--oauth2-provider", "microsoft365",
		"--oauth2-tenant", "contoso.onmicrosoft.com", "--oauth2-grant", "client_credentials", "--oauth2-client-id", "app")
	want := api.OAuth2Settings{Grant: api.OAuth2GrantClientCredentials, ClientId: "app", ClientSecretSet: true, Mechanism: api.TokenMechanismXoauth2,
		TokenUrl: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token", Scope: "https://outlook.office365.com/.default"}
	var endpoint api.Endpoint
	decodeJSON(t, u.ok("endpoints", "get", ep, "--output", "json"), &endpoint)
	if endpoint.Auth.Method != api.AuthMethodOauth2 || endpoint.Auth.Oauth2 == nil || *endpoint.Auth.Oauth2 != want {
		t.Errorf("created: %+v, want oauth2 %+v", endpoint.Auth, want)
	}
	delete(u.env, "MAILMIGRATE_CLIENT_SECRET")
	u.ok("endpoints", "update", ep, "--oauth2-mechanism", "oauthbearer")
	want.Mechanism = api.TokenMechanismOauthbearer
	decodeJSON(t, u.ok("endpoints", "get", ep, "--output", "json"), &endpoint)
	if endpoint.Auth.Oauth2 == nil || *endpoint.Auth.Oauth2 != want {
		t.Errorf("after update --oauth2-mechanism: %+v, want %+v", endpoint.Auth.Oauth2, want)
	}
	if out := u.ok("endpoints", "list"); !strings.Contains(out, "OAuth 2.0, application app's own token") || strings.Contains(out, "Client-secret") {
		t.Errorf("list:\n%s", out)
	}
}

// TestAuthorizeFromTheCommandLine: accounts authorize prints the page and
// the code, waits while nobody has signed in, and ends once the user has
// and the service stored the token.
func TestAuthorizeFromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	tokens := imaptest.StartTokenServer(t, imaptest.TokenServerOptions{})
	tokens.AddClient("public-app", "")
	u := newUser(t, svc)
	src := u.id("endpoints", "create", "--host", "imap.old.example", "--oauth2-client-id", "public-app",
		"--oauth2-token-url", tokens.URL, "--oauth2-scope", "IMAP.AccessAsUser.All offline_access")
	dst := u.id("endpoints", "create", "--host", "imap.new.example")
	task := u.id("tasks", "create", "--name", "n", "--source", src, "--destination", dst)
	u.env["MAILMIGRATE_DESTINATION_PASSWORD"] = "pw"
	account := u.id("accounts", "create", task, "--source-login", "ann@example.com")
	if r := u.run("accounts", "authorize", task, account, "--side", "source"); r.code != 1 || !strings.Contains(r.stderr, "has neither a device_url nor an authorization_url on the source endpoint") {
		t.Errorf("authorize without a device or authorization URL: exit %d, %s", r.code, r.stderr)
	}
	u.ok("endpoints", "update", src, "--oauth2-device-url", tokens.DeviceURL)

	done := make(chan result, 1)
	go func() { done <- u.run("accounts", "authorize", task, account, "--side", "source", "--poll", "100ms") }()
	var code string
	testsupport.Eventually(t, 10*time.Second, func() error {
		for _, c := range tokens.PendingUserCodes() {
			code = c
			return nil
		}
		return errors.New("no device flow started")
	})
	tokens.Approve(code, "ann@example.com")
	r := <-done
	if r.code != 0 || !strings.Contains(r.stdout, "enter the code "+code) || !strings.Contains(r.stdout, "The source refresh token is stored.") {
		t.Errorf("accounts authorize: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestAuthorizeInTheBrowserFromTheCommandLine: with an authorization URL
// and no device URL, accounts authorize prints the sign-in address and
// listens on loopback; the browser, sent back there after the sign-in,
// is told the token is stored, and so is the command's user.
func TestAuthorizeInTheBrowserFromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	tokens := imaptest.StartTokenServer(t, imaptest.TokenServerOptions{})
	tokens.AddClient("desktop-app", "")
	u := newUser(t, svc)
	src := u.id("endpoints", "create", "--host", "imap.gmail.example", "--oauth2-client-id", "desktop-app",
		"--oauth2-token-url", tokens.URL, "--oauth2-scope", "https://mail.google.com/", "--oauth2-authorization-url", tokens.AuthorizationURL)
	dst := u.id("endpoints", "create", "--host", "imap.new.example")
	task := u.id("tasks", "create", "--name", "n", "--source", src, "--destination", dst)
	u.env["MAILMIGRATE_DESTINATION_PASSWORD"] = "pw"
	account := u.id("accounts", "create", task, "--source-login", "ann@example.com")
	if r := u.run("accounts", "authorize", task, account, "--side", "source", "--flow", "device"); r.code != 1 ||
		!strings.Contains(r.stderr, "device_url is not set on the source endpoint") {
		t.Errorf("the device flow without a device URL: exit %d, %s", r.code, r.stderr)
	}

	for _, accept := range []bool{false, true} {
		live := &testsupport.SyncBuffer{}
		u.live = live
		done := make(chan result, 1)
		go func() { done <- u.run("accounts", "authorize", task, account, "--side", "source") }()
		var signIn string
		testsupport.Eventually(t, 10*time.Second, func() error {
			for line := range strings.Lines(live.String()) {
				if strings.HasPrefix(line, tokens.AuthorizationURL) {
					signIn = strings.TrimSpace(line)
					return nil
				}
			}
			return errors.New("no sign-in address printed yet")
		})
		back := tokens.SignIn(t, signIn, "ann@example.com", accept)
		if !strings.HasPrefix(back, "http://127.0.0.1:") {
			t.Fatalf("the provider sent the browser to %s", back)
		}
		_, page := testsupport.GetPage(t, back)
		r := <-done
		switch {
		case accept && (r.code != 0 || !strings.Contains(page, "The refresh token is stored.") ||
			!strings.Contains(r.stdout, "Open this address in a browser") || !strings.Contains(r.stdout, "The source refresh token is stored.")):
			t.Errorf("accounts authorize: exit %d\npage: %s\nstdout:\n%s\nstderr:\n%s", r.code, page, r.stdout, r.stderr)
		case !accept && (r.code != 1 || !strings.Contains(page, "Not authorized: authorization ended without a token: the provider answered access_denied") ||
			!strings.Contains(r.stderr, "access_denied")):
			t.Errorf("accounts authorize, declined: exit %d\npage: %s\nstderr:\n%s", r.code, page, r.stderr)
		}
	}
	taskID, _ := strconv.ParseInt(task, 10, 64)
	accountID, _ := strconv.ParseInt(account, 10, 64)
	events, err := svc.Client.ListAccountEventsWithResponse(context.Background(), taskID, accountID, &api.ListAccountEventsParams{})
	if err != nil || events.JSON200 == nil {
		t.Fatalf("events: %v %v", err, events)
	}
	var kinds []api.EventKind
	for _, e := range *events.JSON200 {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Equal(kinds, []api.EventKind{api.EventKindError, api.EventKindAccountAuthorized}) {
		t.Errorf("the account's events are %v, want the declined sign-in's error, then account.authorized", kinds)
	}
}

// TestTaskWebhookFromTheCommandLine: tasks webhook sets the URL with the
// secret from the environment, shows it without the secret, tests it
// (--test), and removes it; tasks deliveries lists the (empty) log.
func TestTaskWebhookFromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	task := u.emptyTask()
	if r := u.run("tasks", "webhook", task, "--set", "https://hooks.example/mailmigrate"); r.code != 1 || !strings.Contains(r.stderr, "secret must be given") {
		t.Errorf("a webhook without a secret: exit %d, %s", r.code, r.stderr)
	}
	const secret = "whsec-0123456789abcdef"
	u.env["MAILMIGRATE_WEBHOOK_SECRET"] = secret
	out := u.ok("tasks", "webhook", task, "--set", "https://hooks.example/mailmigrate")
	delete(u.env, "MAILMIGRATE_WEBHOOK_SECRET")
	if !strings.Contains(out, "https://hooks.example/mailmigrate") || !strings.Contains(out, "set (never shown)") || strings.Contains(out, secret) {
		t.Errorf("set:\n%s", out)
	}
	// A new URL alone keeps the secret.
	if out := u.ok("tasks", "webhook", task, "--set", "https://hooks.example/v2", "--calls", "per_account"); !strings.Contains(out, "https://hooks.example/v2") ||
		!strings.Contains(out, "set (never shown)") || !strings.Contains(out, "per_account") {
		t.Errorf("a new URL:\n%s", out)
	}
	if out := u.ok("tasks", "webhook", task, "--set", "https://hooks.example/v3"); !strings.Contains(out, "per_account") {
		t.Errorf("a new URL alone changed the calls:\n%s", out)
	}
	if out := u.ok("tasks", "deliveries", task); !strings.Contains(out, "ATTEMPTS") {
		t.Errorf("deliveries:\n%s", out)
	}
	// --test calls it once: a receiver that cannot be reached fails the
	// command in words; one that answers 2xx passes it.
	if r := u.run("tasks", "webhook", task, "--test"); r.code != 1 || !strings.Contains(r.stderr, "the test call did not go through: ") {
		t.Errorf("a test of an unreachable receiver: exit %d, %s", r.code, r.stderr)
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(receiver.Close)
	if out := u.ok("tasks", "webhook", task, "--set", receiver.URL, "--test"); !strings.Contains(out, "the receiver took the test call (HTTP 200") {
		t.Errorf("a test of a receiver that takes it:\n%s", out)
	}
	u.ok("tasks", "webhook", task, "--remove")
	if out := u.ok("tasks", "webhook", task); !strings.Contains(out, "not set") {
		t.Errorf("after --remove:\n%s", out)
	}
}

// TestCutoverFromTheCommandLine: an administrator schedules delta passes
// and the final pass, reads where the cut-over stands, pauses and resumes
// the task, and removes the schedule, all from the command line.
func TestCutoverFromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	task := u.emptyTask()
	if out := u.ok("tasks", "schedule", task); !strings.Contains(out, "planned: no pass yet") || !strings.Contains(out, "none: passes start by hand") {
		t.Errorf("before a schedule:\n%s", out)
	}
	if r := u.run("tasks", "schedule", task, "--every", "90s"); r.code != 2 || !strings.Contains(r.stderr, "--every must be whole minutes") {
		t.Errorf("--every 90s: exit %d, %s", r.code, r.stderr)
	}
	if r := u.run("tasks", "schedule", task, "--final-at", "Saturday night"); r.code != 2 || !strings.Contains(r.stderr, `--final-at "Saturday night"`) {
		t.Errorf("--final-at in words: exit %d, %s", r.code, r.stderr)
	}
	final := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Minute)
	out := u.ok("tasks", "schedule", task, "--every", "6h", "--zone", "UTC", "--final-at", final.Format("2006-01-02 15:04"))
	if !strings.Contains(out, "delta passes every 6 hours; final pass "+final.Format("Mon 2 Jan 15:04 MST")) {
		t.Errorf("set:\n%s", out)
	}
	if out := u.ok("tasks", "schedule", task); !strings.Contains(out, "next pass ") || !strings.Contains(out, "final pass ") {
		t.Errorf("the schedule:\n%s", out)
	}
	if out := u.ok("tasks", "pause", task); !strings.Contains(out, "paused") {
		t.Errorf("pause:\n%s", out)
	}
	if r := u.run("tasks", "run", task); r.code != 1 || !strings.Contains(r.stderr, "task is paused") {
		t.Errorf("run while paused: exit %d, %s", r.code, r.stderr)
	}
	if out := u.ok("tasks", "get", task); !strings.Contains(out, "paused since ") {
		t.Errorf("get while paused:\n%s", out)
	}
	u.ok("tasks", "resume", task)
	if r := u.run("tasks", "resume", task); r.code != 1 || !strings.Contains(r.stderr, "task is not paused") {
		t.Errorf("resume twice: exit %d, %s", r.code, r.stderr)
	}
	u.ok("tasks", "schedule", task, "--remove")
	if out := u.ok("tasks", "schedule", task); !strings.Contains(out, "none: passes start by hand") {
		t.Errorf("after --remove:\n%s", out)
	}
	if r := u.run("tasks", "final", task); r.code != 1 || !strings.Contains(r.stderr, "the task has no accounts: a final pass would verify nothing") {
		t.Errorf("final of a task without accounts: exit %d, %s", r.code, r.stderr)
	}
}

// TestTaskMailFromTheCommandLine: recipients are set, shown and removed;
// a service without an SMTP server says what to set.
func TestTaskMailFromTheCommandLine(t *testing.T) {
	t.Parallel()
	smtp := smtptest.Start(t, 0)
	server, err := delivery.ParseMailServer("smtp+plain://"+smtp.Addr(), "", "mailmigrate@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, withServer := range []bool{true, false} {
		opts := servicetest.Options{}
		if withServer {
			opts.Mail = &server
		}
		u := newUser(t, servicetest.Start(t, opts))
		task := u.emptyTask()
		if !withServer {
			if r := u.run("tasks", "mail", task, "--to", "it@acme.example"); r.code != 1 || !strings.Contains(r.stderr, "MAILMIGRATE_SMTP_URL") {
				t.Errorf("without a server: exit %d, %s", r.code, r.stderr)
			}
			if out := u.ok("tasks", "mail", task); !strings.Contains(out, "none: start the service with MAILMIGRATE_SMTP_URL") {
				t.Errorf("without a server:\n%s", out)
			}
			continue
		}
		if out := u.ok("tasks", "mail", task, "--to", "it@acme.example,boss@acme.example"); !strings.Contains(out, "it@acme.example, boss@acme.example") || !strings.Contains(out, "configured") {
			t.Errorf("set:\n%s", out)
		}
		if r := u.run("tasks", "mail", task, "--to", "not an address"); r.code != 1 || !strings.Contains(r.stderr, `"not an address" is not a mail address`) {
			t.Errorf("a bad address: exit %d, %s", r.code, r.stderr)
		}
		u.ok("tasks", "mail", task, "--remove")
		if out := u.ok("tasks", "mail", task); !strings.Contains(out, "Mail to") || strings.Contains(out, "it@acme.example") {
			t.Errorf("after --remove:\n%s", out)
		}
	}
}

// emptyTask creates two endpoints and a task between them, without
// accounts, and returns the task's id.
func (u *user) emptyTask() string {
	src := u.id("endpoints", "create", "--host", "imap.old.example")
	dst := u.id("endpoints", "create", "--host", "imap.new.example")
	return u.id("tasks", "create", "--name", "n", "--source", src, "--destination", dst)
}
