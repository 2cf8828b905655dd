package sides

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/oauth"
	"github.com/mailmigrate/mailmigrate/internal/oauth/signin"
	"github.com/mailmigrate/mailmigrate/internal/persist"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// Logins turn an endpoint and an account's credentials into the engine's
// sides: the account's password, the endpoint's master login, or OAuth 2.0
// tokens. An application's own tokens (client credentials) serve every
// account of its endpoint in this process, so that 300 accounts do not
// fetch 300 tokens; a user's come from the account's refresh token, and a
// rotated one is stored for the next attempt.
type Logins struct {
	store  RotatedTokenStore
	logger *slog.Logger
	mu     sync.Mutex
	apps   map[applicationKey]*oauth.Source
}

// applicationKey names an application's token source: a change of the
// endpoint's settings or secret makes a new one.
type applicationKey struct {
	endpointID                int64
	tokenURL, clientID, scope string
	clientSecret              migration.Password
}

// RotatedTokenStore keeps the refresh token a server rotated, for the
// account's next login.
type RotatedTokenStore interface {
	AccountSecretRotated(ctx context.Context, taskID, accountID int64, side string, token migration.Password) error
}

// NewLogins makes the logins of this process, which keep rotated refresh
// tokens in store.
func NewLogins(store RotatedTokenStore, logger *slog.Logger) *Logins {
	return &Logins{store: store, logger: logger, apps: map[applicationKey]*oauth.Source{}}
}

// Sides are both sides of an account of a task.
func (l *Logins) Sides(taskID, accountID int64, src, dst migration.Endpoint, creds migration.Credentials) (imapconn.Side, imapconn.Side) {
	return l.side(taskID, accountID, "source", src, creds.SourceLogin, creds.SourcePassword),
		l.side(taskID, accountID, "destination", dst, creds.DestinationLogin, creds.DestinationPassword)
}

// side is how the engine logs in to e for an account with secret, its
// password or refresh token as e says.
func (l *Logins) side(taskID, accountID int64, name string, e migration.Endpoint, login string, secret migration.Password) imapconn.Side {
	s := imapconn.Side{Server: serverOf(e), Login: login, Password: string(secret), Profile: profileOf(e), Limits: limitsOf(e.Limits),
		Sieve: imapconn.SieveService{Port: e.Sieve.Port, Security: imapconn.Security(e.Sieve.TLSMode)}}
	switch a := e.Auth; a.Method {
	case migration.AuthMaster:
		s.Master, s.MasterForm, s.Password = a.MasterLogin, imapconn.MasterForm(a.MasterForm), string(a.MasterPassword)
	case migration.AuthOAuth2:
		s.Password = ""
		s.TokenMechanism = imapconn.TokenMechanism(strings.ToUpper(string(a.OAuth2.Mechanism)))
		config := signin.ConfigOf(a.OAuth2)
		switch {
		case a.OAuth2.Grant == migration.GrantClientCredentials:
			s.Token = l.application(e.ID, config)
		case a.OAuth2.Grant == migration.GrantServiceAccount:
			s.Token = delegated(config, login)
		case secret == "":
			s.Token = noRefreshToken{}
		default:
			s.Token = config.ForUser(string(secret), func(token string) { l.storeRotated(taskID, accountID, name, token) })
		}
	}
	return s
}

// delegated is the token source of a service account acting for login;
// a key that cannot sign fails the login with words saying so.
func delegated(config oauth.Config, login string) imapconn.TokenSource {
	key, err := oauth.ParseServiceAccountKey([]byte(config.ClientSecret))
	if err != nil {
		return brokenKey{err}
	}
	return config.ForDelegatedUser(key, login)
}

// brokenKey stands for a service account whose key file cannot be used.
type brokenKey struct{ err error }

func (b brokenKey) Token(context.Context) (string, error) {
	return "", &oauth.RefusedError{Code: "invalid_client", Advice: "the endpoint's service account key cannot be used (" + b.err.Error() + "): upload its JSON key file again"}
}

// application is the shared token source of an endpoint's application.
func (l *Logins) application(endpointID int64, config oauth.Config) *oauth.Source {
	key := applicationKey{endpointID: endpointID, tokenURL: config.TokenURL, clientID: config.ClientID,
		scope: strings.Join(config.Scopes, " "), clientSecret: migration.Password(config.ClientSecret)}
	l.mu.Lock()
	defer l.mu.Unlock()
	src, ok := l.apps[key]
	if !ok {
		src = config.ForApplication()
		l.apps[key] = src
	}
	return src
}

// storeRotated keeps a refresh token the server rotated: the old one may
// stop working. A failure is logged; the attempt goes on with the new token.
func (l *Logins) storeRotated(taskID, accountID int64, side, token string) {
	err := persist.Outcome(context.Background(), l.logger, func(ctx context.Context) error {
		return l.store.AccountSecretRotated(ctx, taskID, accountID, side, migration.Password(token))
	})
	if err != nil {
		l.logger.Error("a rotated refresh token was not stored; the account may need a new one", "task", taskID, "account", accountID, "side", side, "err", err)
	}
}

// serverOf is where an endpoint's server lives.
func serverOf(e migration.Endpoint) imapconn.Server {
	return imapconn.Server{Host: e.Host, Port: e.Port, Security: imapconn.Security(e.TLSMode), SkipVerify: e.TLSSkipVerify}
}

// limitsOf is the engine's Limits of an endpoint's own.
func limitsOf(l migration.EndpointLimits) provider.Limits {
	return provider.Limits{MaxMessageBytes: l.MaxMessageBytes, DailyDownloadBytes: l.DailyDownloadBytes,
		DailyUploadBytes: l.DailyUploadBytes, Connections: l.Connections, AccountConnections: l.AccountConnections}
}

// profileOf is the engine's profile of e; auto is told from the server.
func profileOf(e migration.Endpoint) provider.Profile {
	if e.Profile == migration.ProfileAuto {
		return provider.ProfileAuto
	}
	return provider.Profile(e.Profile)
}

// noRefreshToken stands for the token source of an account without a
// refresh token yet: its login fails at once, saying how to get one.
type noRefreshToken struct{}

func (noRefreshToken) Token(context.Context) (string, error) { return "", errNoRefreshToken{} }

type errNoRefreshToken struct{}

func (errNoRefreshToken) Error() string {
	return "no refresh token is stored for this account: authorize it (Authorize on the account's page, or mailmigrate accounts authorize), or give it one"
}

// Refused: trying again does not help.
func (errNoRefreshToken) Refused() bool { return true }
