package migration

import (
	"errors"
	"strings"
	"testing"
)

// TestFailedRunSaysWhatToDo: an account's last error names the side and
// login and ends with the next step; the event's error keeps the server's
// words alone.
func TestFailedRunSaysWhatToDo(t *testing.T) {
	t.Parallel()
	parties := AttemptParties{TaskID: 1, AccountID: 2, Source: Party{Side: "source", Login: "ann", Host: "old", Port: 993},
		Destination: Party{Side: "destination", Login: "ann@new", Host: "new", Port: 993}}
	for _, tc := range []struct {
		name    string
		end     AttemptEnd
		advice  string
		noRetry bool
	}{
		{"wrong password", AttemptEnd{Err: errors.New("source ann at old:993: authentication failed: NO"), Blamed: &parties.Source, Kind: FailureAuth},
			"What to do: Check the source login ann and its password (Edit the account)", true},
		{"a server's sentence", AttemptEnd{Err: errors.New("source ann at old:993: authentication failed: imap: NO [AUTHENTICATIONFAILED] Authentication failed."),
			Blamed: &parties.Source, Kind: FailureAuth}, "What to do: Check the source login ann and its password (Edit the account)", true},
		{"full mailbox", AttemptEnd{Err: errors.New("destination ann@new at new:993: over quota: NO"), Blamed: &parties.Destination, Kind: FailureQuota},
			"What to do: Make room in ann@new's mailbox on the destination or raise its quota", true},
		{"self-signed destination", AttemptEnd{Err: errors.New("destination ann@new at new:993: refused: x509"), Blamed: &parties.Destination,
			Kind: FailureRefused, Problem: ProblemUntrustedCertificate}, `What to do: Install the issuing CA's certificate on the machine that runs mailmigrate, or tick "Accept any certificate"`, true},
		{"refused master login", AttemptEnd{Err: errors.New("source ann at old:993: authentication failed: NO"), Kind: FailureAuth,
			Blamed: &Party{Side: "source", Login: "ann", Host: "old", Port: 993, Shared: EndpointAuth{Method: AuthMaster, MasterLogin: "admin"}.SharedCredential()}},
			"What to do: The source endpoint's master login admin was refused for ann: check it (Edit the endpoint", true},
		{"refused application", AttemptEnd{Err: errors.New("destination ann@new at new:993: token refused: invalid_client"), Kind: FailureToken,
			Blamed: &Party{Side: "destination", Login: "ann@new", Host: "new", Port: 993,
				Shared: EndpointAuth{Method: AuthOAuth2, OAuth2: OAuth2Settings{Grant: GrantClientCredentials}}.SharedCredential()}},
			"What to do: The destination endpoint's OAuth 2.0 application (client_credentials) was refused for ann@new", true},
		{"network", AttemptEnd{Err: errors.New("source ann at old:993: connection problem: EOF"), Blamed: &parties.Source, Kind: FailureTransient, Transient: true},
			"What to do: The source server at old:993 could not be reached or went away; the service retries the account by itself.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := parties.Outcome(tc.end, DefaultRetryDelays)
			sentence := strings.TrimSuffix(tc.end.Err.Error(), ".") + ". "
			if o.State != AccountFailed || !strings.HasPrefix(o.LastError, sentence) || !strings.Contains(o.LastError, tc.advice) || strings.Contains(o.LastError, "..") {
				t.Errorf("last error %q, want %q then %q", o.LastError, tc.end.Err, tc.advice)
			}
			if e := o.Events[0]; e.Error != tc.end.Err.Error() || !strings.Contains(e.Message, tc.advice) {
				t.Errorf("event error %q, message %q", e.Error, e.Message)
			}
			if (len(o.RetryDelays) == 0) != tc.noRetry {
				t.Errorf("retries %v", o.RetryDelays)
			}
		})
	}
}

// TestLoginTestFailuresSayWhatToDo: a login test's failure ends with the
// next step: a refused port names the endpoint's port, a wrong password
// the account, a master login the endpoint, a server that went away the
// endpoint's check.
func TestLoginTestFailuresSayWhatToDo(t *testing.T) {
	t.Parallel()
	party := Party{Side: "source", Login: "ann", Host: "old", Port: 993}
	master := party
	master.Shared = "master login admin"
	for _, tc := range []struct {
		kind    FailureKind
		problem ServerProblem
		blamed  Party
		advice  string
	}{
		{FailureAuth, "", party, "What to do: Check the source login ann and its password (Edit the account)"},
		{FailureAuth, "", master, "What to do: The source endpoint's master login admin was refused for ann"},
		{FailureTransient, "", party, "What to do: The source server at old:993 could not be reached or went away: check the endpoint (Test connection)"},
		{FailureTransient, ProblemRefused, party, "What to do: " + problemAdvice[ProblemRefused]},
	} {
		words := TestFailureWords("connection problem: dial tcp: refused", tc.kind, tc.problem, tc.blamed)
		if !strings.HasPrefix(words, "connection problem: dial tcp: refused. What to do: ") || !strings.Contains(words, tc.advice) {
			t.Errorf("%s/%s: %q, want %q", tc.kind, tc.problem, words, tc.advice)
		}
	}
}
