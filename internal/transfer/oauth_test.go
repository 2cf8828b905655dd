package transfer

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/oauth"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// oauthFixture is a Dovecot source and an OAuth-only destination (the
// Microsoft 365 model of imaptest.OAuthServer) whose tokens come from a
// fake authorization server.
type oauthFixture struct {
	src    *imaptest.Dovecot
	dst    *imaptest.OAuthServer
	tokens *imaptest.TokenServer
	config oauth.Config
}

func newOAuthFixture(t *testing.T, tokens imaptest.TokenServerOptions, corpus imaptest.CorpusOptions) *oauthFixture {
	return newOAuthFixtureWith(t, tokens, corpus, imaptest.OAuthServerOptions{})
}

func newOAuthFixtureWith(t *testing.T, tokens imaptest.TokenServerOptions, corpus imaptest.CorpusOptions, server imaptest.OAuthServerOptions) *oauthFixture {
	t.Helper()
	f := &oauthFixture{tokens: imaptest.StartTokenServer(t, tokens)}
	f.tokens.AddClient("mailmigrate", "client-secret")
	f.config = oauth.Config{TokenURL: f.tokens.URL, ClientID: "mailmigrate", ClientSecret: "client-secret",
		Scopes: []string{"https://outlook.office365.com/IMAP.AccessAsUser.All", "offline_access"}, Early: time.Second}
	f.src = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"ann": "pw"}})
	f.src.Load(t, "ann", imaptest.BuildCorpus(corpus))
	server.Users = []string{"ann@example.com", "bob@example.com"}
	f.dst = imaptest.StartOAuthServer(t, f.tokens, server)
	return f
}

func (f *oauthFixture) destination(login string, tokens imapconn.TokenSource, mech imapconn.TokenMechanism) imapconn.Side {
	return imapconn.Side{Server: imapconn.Server{Host: f.dst.Host, Port: f.dst.Port, Security: imapconn.SecurityPlain}, Login: login, Token: tokens, TokenMechanism: mech}
}

// wantCopied checks that every folder of res holds on the destination
// what the source held: every message, once.
func (f *oauthFixture) wantCopied(t *testing.T, login string, res Result) {
	t.Helper()
	if len(res.Folders) == 0 {
		t.Fatal("no folder was copied")
	}
	for _, folder := range res.Folders {
		if got := f.dst.Count(t, login, folder.Destination); got != folder.SourceMessages {
			t.Errorf("%s: %d messages on the destination, the source has %d", folder.Destination, got, folder.SourceMessages)
		}
	}
}

// TestOAuthLoginsMigrate: a user's refresh token logs the account in
// with XOAUTH2 and with OAUTHBEARER, on the engine's connections and the
// destination's APPEND connections; a refresh token the server rotates
// is handed back to be stored.
func TestOAuthLoginsMigrate(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t, imaptest.TokenServerOptions{Rotate: true}, imaptest.CorpusOptions{Seed: 3})
	source := dovecotSide(f.src, "ann", "pw")
	for _, tc := range []struct {
		login string
		mech  imapconn.TokenMechanism
	}{{"ann@example.com", imapconn.XOAuth2}, {"bob@example.com", imapconn.OAuthBearer}} {
		var mu sync.Mutex
		var rotated []string
		refresh := f.tokens.IssueRefreshToken(tc.login, "mailmigrate")
		tokens := f.config.ForUser(refresh, func(token string) {
			mu.Lock()
			defer mu.Unlock()
			rotated = append(rotated, token)
		})
		res := migrateVerified(t, Job{Source: source, Destination: f.destination(tc.login, tokens, tc.mech), State: syncstate.NewMemoryState()})
		f.wantCopied(t, tc.login, res)
		mu.Lock()
		if len(rotated) == 0 || rotated[len(rotated)-1] == refresh {
			t.Errorf("%s: the rotated refresh tokens handed back: %q", tc.mech, rotated)
		}
		mu.Unlock()
	}
}

// TestTokenExpiringMidRunIsRefreshed: tokens live one second and the
// server ends a session whose token expired, as Exchange Online does; a
// run that lasts many tokens logs in again with a fresh one each time,
// more often than its attempts allow for failures, and ends with every
// message once and no failure.
func TestTokenExpiringMidRunIsRefreshed(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t, imaptest.TokenServerOptions{Lifetime: time.Second}, imaptest.CorpusOptions{Seed: 8, LargeMessages: 3, LargeSize: 200 << 10})
	host, port := imaptest.SlowProxy(t, f.src.Addr(), 80_000) // the copy takes about 9 s
	source := imapconn.Side{Server: imapconn.Server{Host: host, Port: port, Security: imapconn.SecurityPlain}, Login: "ann", Password: "pw"}
	refresh := f.tokens.IssueRefreshToken("ann@example.com", "mailmigrate")
	started := time.Now()
	const attempts = 3
	res := migrateVerified(t, Job{Source: source, Destination: f.destination("ann@example.com", f.config.ForUser(refresh, nil), imapconn.XOAuth2),
		State: syncstate.NewMemoryState(), Tuning: Tuning{Backoff: 100 * time.Millisecond, Tries: attempts}})
	f.wantCopied(t, "ann@example.com", res)
	took := time.Since(started)
	if took < 3*time.Second {
		t.Fatalf("the run took %s, less than a token's life: nothing was proven", took)
	}
	if n := f.dst.Invalidated(); n <= attempts {
		t.Errorf("%d sessions outlived their token in a %s run, want more than the %d attempts to prove that an expiry uses none", n, took.Round(time.Second), attempts)
	}
	if n := f.tokens.Issued("refresh_token"); n < 2 {
		t.Errorf("%d access tokens over a %s run of 2 s tokens, want a refresh", n, took.Round(time.Second))
	}
	for _, folder := range res.Folders {
		if folder.Error != "" || len(folder.Failures) > 0 {
			t.Errorf("%s: %q %v", folder.Source, folder.Error, folder.Failures)
		}
	}
}

// TestRefusedTokenSaysWhatToDo: a revoked refresh token and a wrong client
// secret fail the login at once as authentication failures, in words that
// say what to do; an IMAP server without the mechanism is a setting to
// change.
func TestRefusedTokenSaysWhatToDo(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t, imaptest.TokenServerOptions{}, imaptest.CorpusOptions{Seed: 1, Messages: 1})
	refresh := f.tokens.IssueRefreshToken("ann@example.com", "mailmigrate")
	f.tokens.Revoke(refresh)
	wrongSecret := f.config
	wrongSecret.ClientSecret = "old-secret"
	for _, tc := range []struct {
		name   string
		tokens imapconn.TokenSource
		want   string
	}{
		{"revoked", f.config.ForUser(refresh, nil), "the user must authorize again"},
		{"wrong secret", wrongSecret.ForApplication(), "the client id or secret is wrong or expired"},
	} {
		err := CheckLogin(t.Context(), f.destination("ann@example.com", tc.tokens, imapconn.XOAuth2), "destination", Tuning{})
		if imapconn.KindOf(err) != imapconn.KindAuth || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (kind %v), want an authentication failure saying %q", tc.name, err, imapconn.KindOf(err), tc.want)
		}
	}
	// A user's token for another mailbox: the server's refusal, with its details.
	other := f.config.ForUser(f.tokens.IssueRefreshToken("bob@example.com", "mailmigrate"), nil)
	err := CheckLogin(t.Context(), f.destination("ann@example.com", other, imapconn.XOAuth2), "destination", Tuning{})
	if imapconn.KindOf(err) != imapconn.KindAuth || err == nil || !strings.Contains(err.Error(), `"status":"401"`) {
		t.Errorf("a token of another user: %v (kind %v)", err, imapconn.KindOf(err))
	}
	// The application's own token acts for any mailbox of the tenant.
	if err := CheckLogin(t.Context(), f.destination("bob@example.com", f.config.ForApplication(), imapconn.OAuthBearer), "destination", Tuning{}); err != nil {
		t.Errorf("an application's token: %v", err)
	}
	// Dovecot here offers no token mechanism.
	err = CheckLogin(t.Context(), imapconn.Side{Server: imapconn.Server{Host: f.src.Host, Port: f.src.Port, Security: imapconn.SecurityPlain}, Login: "ann",
		Token: f.config.ForApplication()}, "source", Tuning{})
	if imapconn.KindOf(err) != imapconn.KindPermanent || err == nil || !strings.Contains(err.Error(), "offers no AUTH=XOAUTH2") {
		t.Errorf("a server without XOAUTH2: %v (kind %v)", err, imapconn.KindOf(err))
	}
}

// TestThrottlingPausesAndResumes: the destination throttles three APPENDs
// mid-folder as Exchange Online does (a suggested backoff, then the
// session ends). The account pauses as long as the server asks each time,
// is told of each pause, and ends exact: every message once, none failed,
// no attempt used up.
func TestThrottlingPausesAndResumes(t *testing.T) {
	t.Parallel()
	const backoff = 300 * time.Millisecond
	f := newOAuthFixtureWith(t, imaptest.TokenServerOptions{}, imaptest.CorpusOptions{Seed: 12, Messages: 30},
		imaptest.OAuthServerOptions{ThrottleAppends: []int{3, 9, 20}, Backoff: backoff})
	var throttles []Throttle
	job := Job{Source: dovecotSide(f.src, "ann", "pw"),
		Destination: f.destination("ann@example.com", f.config.ForUser(f.tokens.IssueRefreshToken("ann@example.com", "mailmigrate"), nil), imapconn.XOAuth2),
		State:       syncstate.NewMemoryState(), Tuning: Tuning{Tries: 1}, // any failure would end the run
		OnThrottled: func(th Throttle) { throttles = append(throttles, th) }}
	started := time.Now()
	res := migrateVerified(t, job)
	f.wantCopied(t, "ann@example.com", res)
	if f.dst.Throttled() != 3 || len(throttles) != 3 {
		t.Fatalf("the server throttled %d APPENDs and the run was told of %d pauses, want 3 and 3", f.dst.Throttled(), len(throttles))
	}
	for _, th := range throttles {
		if th.Side != "destination" || !strings.Contains(th.Words, "Request is throttled. Suggested Backoff Time: 300 milliseconds") {
			t.Errorf("throttle %+v", th)
		}
	}
	if took := time.Since(started); took < 3*backoff {
		t.Errorf("the run took %s with three pauses of %s asked for", took, backoff)
	}
	for _, folder := range res.Folders {
		if len(folder.Failures) > 0 || folder.Error != "" {
			t.Errorf("%s: %q %v", folder.Source, folder.Error, folder.Failures)
		}
	}
}

// TestServiceAccountActsForEachUser: a Google service account with
// domain-wide delegation signs a JWT naming each user (RFC 7523) and logs
// every account in with its own token, without any user's secret. One
// without delegation fails as an authentication failure saying where to
// grant it; the key file is read as the Cloud console writes it.
func TestServiceAccountActsForEachUser(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t, imaptest.TokenServerOptions{}, imaptest.CorpusOptions{Seed: 5, Messages: 20})
	key, err := oauth.ParseServiceAccountKey(f.tokens.AddServiceAccount(t, "migrator@acme.iam.gserviceaccount.com", true))
	if err != nil {
		t.Fatal(err)
	}
	source := dovecotSide(f.src, "ann", "pw")
	res := migrateVerified(t, Job{Source: source, Destination: f.destination("bob@example.com", f.config.ForDelegatedUser(key, "bob@example.com"), imapconn.XOAuth2),
		State: syncstate.NewMemoryState()})
	f.wantCopied(t, "bob@example.com", res)
	if n := f.tokens.Issued("urn:ietf:params:oauth:grant-type:jwt-bearer"); n < 1 {
		t.Errorf("%d tokens from signed assertions, want the service account's", n)
	}

	undelegated, err := oauth.ParseServiceAccountKey(f.tokens.AddServiceAccount(t, "other@acme.iam.gserviceaccount.com", false))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckLogin(t.Context(), f.destination("ann@example.com", f.config.ForDelegatedUser(undelegated, "ann@example.com"), imapconn.XOAuth2), "destination", Tuning{})
	if imapconn.KindOf(err) != imapconn.KindAuth || err == nil || !strings.Contains(err.Error(), "domain-wide delegation") {
		t.Errorf("a service account without delegation: %v (kind %v), want an authentication failure saying to grant it", err, imapconn.KindOf(err))
	}
	if _, err := oauth.ParseServiceAccountKey([]byte(`{"type":"authorized_user","client_id":"x"}`)); err == nil {
		t.Error("a user's credentials file was read as a service account key")
	}
}

// TestPushbackIsPushback: servers' other ways of asking to slow down,
// [LIMIT] with a slow-down text (RFC 5530), [THROTTLED] and [UNAVAILABLE],
// pause the account with the server's words and go on: no message is
// recorded as refused and no attempt is used up. A [LIMIT] about the
// message itself stays a refusal in the server's words.
func TestPushbackIsPushback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		answer   *imap.Error
		pushback bool
		bye      bool // the answer comes as "* BYE" and the connection closes
	}{
		{"bye, unavailable", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeUnavailable, Text: "Too many sessions, come back later"}, true, true},
		{"limit, slow down", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeLimit, Text: "Too many commands, slow down"}, true, false},
		{"throttled", &imap.Error{Type: imap.StatusResponseTypeNo, Code: "THROTTLED", Text: "Request rate exceeded"}, true, false},
		{"unavailable", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeUnavailable, Text: "Backend temporarily unavailable"}, true, false},
		{"limit on the message", &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeLimit, Text: "Too many flags on this message"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newOAuthFixtureWith(t, imaptest.TokenServerOptions{}, imaptest.CorpusOptions{Seed: 13, Messages: 12},
				imaptest.OAuthServerOptions{ThrottleAppends: []int{4}, ThrottleAnswer: tc.answer, ThrottleBye: tc.bye, RefuseOnly: !tc.pushback})
			var throttles []Throttle
			job := Job{Source: dovecotSide(f.src, "ann", "pw"),
				Destination: f.destination("ann@example.com", f.config.ForUser(f.tokens.IssueRefreshToken("ann@example.com", "mailmigrate"), nil), imapconn.XOAuth2),
				State:       syncstate.NewMemoryState(), Tuning: Tuning{Tries: 1, ThrottlePause: 50 * time.Millisecond}, // any failure would end the run
				OnThrottled: func(th Throttle) { throttles = append(throttles, th) }}
			res, err := Migrate(t.Context(), job)
			var refused []string
			for _, folder := range res.Folders {
				for _, failure := range folder.Failures {
					refused = append(refused, failure.Reason)
				}
			}
			if !tc.pushback {
				if len(throttles) != 0 || len(refused) != 1 || !strings.Contains(refused[0], tc.answer.Text) {
					t.Errorf("a refusal of one message: %d pauses, refused %q, err %v; want none, and it refused in the server's words", len(throttles), refused, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("the run failed: %v", err)
			}
			f.wantCopied(t, "ann@example.com", res)
			if len(throttles) != 1 || throttles[0].Side != "destination" || throttles[0].Words != tc.answer.Text || len(refused) != 0 {
				t.Errorf("pauses %+v, refused %q; want one pause in the server's words and nothing refused", throttles, refused)
			}
		})
	}
}
