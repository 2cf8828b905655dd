// Package signin runs the OAuth 2.0 sign-ins that give an account its
// refresh token: the device flow, which a person completes on another
// device, and the browser flow, which returns to the service's callback
// (docs/providers.md). The protocol itself is package oauth's.
package signin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/oauth"
	"github.com/mailmigrate/mailmigrate/internal/persist"
)

// AuthorizeStore is what authorizations need of storage.
type AuthorizeStore interface {
	TaskEndpoints(ctx context.Context, taskID int64) (src, dst migration.Endpoint, err error)
	AccountGet(ctx context.Context, taskID, id int64) (migration.Account, error)
	AccountSecretRotated(ctx context.Context, taskID, id int64, side string, token migration.Password) error
	EventAppend(ctx context.Context, e migration.Event) error
	AuthorizationStart(ctx context.Context, a migration.BrowserAuthorization) error
	AuthorizationTake(ctx context.Context, stateDigest []byte) (migration.BrowserAuthorization, error)
}

// Authorizer gets accounts their refresh tokens from their users'
// sign-ins, in one of two flows.
//
// Device (RFC 8628): it asks the endpoint's authorization server for a
// user code, which a person enters on the provider's page while signing in
// as the account's user, and waits for the consent in the background. A
// device flow lives in this process only: after a restart a person starts
// another (the codes last minutes).
//
// Browser (RFC 6749 §4.1 with PKCE, RFC 7636): it makes the provider's
// sign-in address; the provider sends the browser back with a code, which
// Complete redeems. What the return needs is in the database, so any
// process finishes it.
//
// Either way the refresh token is stored as the account's, and an event
// says so.
type Authorizer struct {
	store  AuthorizeStore
	logger *slog.Logger
	mu     sync.Mutex
	flows  map[authorizationKey]*deviceFlow
}

// deviceFlow is one device authorization under way.
type deviceFlow struct {
	cancel context.CancelFunc
}

type authorizationKey struct {
	taskID, accountID int64
	side              string
}

// NewAuthorizer returns an Authorizer over store.
func NewAuthorizer(store AuthorizeStore, logger *slog.Logger) *Authorizer {
	return &Authorizer{store: store, logger: logger, flows: map[authorizationKey]*deviceFlow{}}
}

// Start begins an authorization of the account's side; a device flow of
// the side under way is canceled, and a browser flow's state replaced.
func (a *Authorizer) Start(ctx context.Context, taskID, accountID int64, in migration.AuthorizationInput) (migration.Authorization, error) {
	side := in.Side
	if side != "source" && side != "destination" {
		return migration.Authorization{}, &migration.InvalidError{Field: "side", Reason: "must be source|destination"}
	}
	if in.Flow != "" && !slices.Contains(migration.AuthorizationFlows, in.Flow) {
		return migration.Authorization{}, &migration.InvalidError{Field: "flow", Reason: "must be device|browser"}
	}
	alsoAccept, err := migration.CheckAlsoAccept(in.AlsoAccept)
	if err != nil {
		return migration.Authorization{}, err
	}
	key := authorizationKey{taskID, accountID, side}
	e, login, err := a.accountSide(ctx, key)
	if err != nil {
		return migration.Authorization{}, err
	}
	who := signInNames{login, alsoAccept}
	if e.Auth.AccountSecret() != migration.SecretRefreshToken {
		return migration.Authorization{}, &migration.InvalidError{Field: "side",
			Reason: fmt.Sprintf("%s: the %s endpoint takes no refresh tokens (auth oauth2 with grant refresh_token)", side, side)}
	}
	o := e.Auth.OAuth2
	flow := in.Flow
	switch {
	case flow != "":
	case o.DeviceURL != "":
		flow = migration.FlowDevice
	case o.AuthorizationURL != "":
		flow = migration.FlowBrowser
	default:
		return migration.Authorization{}, &migration.InvalidError{Field: "auth.oauth2",
			Reason: "has neither a device_url nor an authorization_url on the " + side + " endpoint: an authorization needs one"}
	}
	if flow == migration.FlowBrowser {
		return a.startBrowser(ctx, key, who, o, in.RedirectURI)
	}
	return a.startDevice(ctx, key, who, o)
}

// signInNames are who may sign in for an account's side: its login, and
// the other names declared for it.
type signInNames struct {
	login      string
	alsoAccept []string
}

// startDevice asks for a user code and waits for the consent in the
// background.
func (a *Authorizer) startDevice(ctx context.Context, key authorizationKey, who signInNames, o migration.OAuth2Settings) (migration.Authorization, error) {
	if o.DeviceURL == "" {
		return migration.Authorization{}, &migration.InvalidError{Field: "auth.oauth2.device_url",
			Reason: "is not set on the " + key.side + " endpoint: the device authorization needs it"}
	}
	config := ConfigOf(o)
	started, err := config.StartDevice(ctx)
	if err != nil {
		return migration.Authorization{}, &migration.InvalidError{Field: "device authorization", Reason: "did not start: " + err.Error()}
	}
	flowCtx, cancel := context.WithDeadline(context.Background(), started.Expires)
	flow := &deviceFlow{cancel: cancel}
	a.replaceDevice(key, flow)
	go a.await(flowCtx, flow, key, who, config, started)
	return migration.Authorization{Flow: migration.FlowDevice, UserCode: started.UserCode, VerificationURI: started.VerificationURI,
		VerificationURIComplete: started.VerificationURIComplete, ExpiresAt: started.Expires}, nil
}

// accountSide is the endpoint and login of an account's side; no secret
// is opened.
func (a *Authorizer) accountSide(ctx context.Context, key authorizationKey) (migration.Endpoint, string, error) {
	src, dst, err := a.store.TaskEndpoints(ctx, key.taskID)
	if err != nil {
		return migration.Endpoint{}, "", err
	}
	account, err := a.store.AccountGet(ctx, key.taskID, key.accountID)
	if err != nil {
		return migration.Endpoint{}, "", err
	}
	if key.side == "destination" {
		return dst, account.DestinationLogin, nil
	}
	return src, account.SourceLogin, nil
}

// replaceDevice makes flow the side's device flow (nil: none), canceling
// the one under way.
func (a *Authorizer) replaceDevice(key authorizationKey, flow *deviceFlow) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if earlier := a.flows[key]; earlier != nil {
		earlier.cancel()
	}
	if flow == nil {
		delete(a.flows, key)
		return
	}
	a.flows[key] = flow
}

// await waits for the user's consent and stores the refresh token.
func (a *Authorizer) await(ctx context.Context, flow *deviceFlow, key authorizationKey, who signInNames, config oauth.Config, started *oauth.DeviceAuthorization) {
	defer func() {
		a.mu.Lock()
		if a.flows[key] == flow { // not a newer flow of the side
			delete(a.flows, key)
		}
		a.mu.Unlock()
		flow.cancel()
	}()
	signed, err := config.AwaitDevice(ctx, started)
	if err == nil {
		err = a.storeSignIn(ctx, key, who, signed)
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return // a newer flow of the same side replaced this one
	}
	a.logOutcome(ctx, key, who.login, err)
}

// startBrowser makes the sign-in address and keeps what the browser's
// return needs.
func (a *Authorizer) startBrowser(ctx context.Context, key authorizationKey, who signInNames, o migration.OAuth2Settings, redirectURI string) (migration.Authorization, error) {
	if o.AuthorizationURL == "" {
		return migration.Authorization{}, &migration.InvalidError{Field: "auth.oauth2.authorization_url",
			Reason: "is not set on the " + key.side + " endpoint: the browser flow needs it"}
	}
	if err := migration.CheckRedirectURI(redirectURI); err != nil {
		return migration.Authorization{}, err
	}
	started, err := ConfigOf(o).StartBrowser(redirectURI, who.login)
	if err != nil {
		return migration.Authorization{}, err
	}
	expires := time.Now().Add(migration.BrowserAuthorizationLifetime)
	err = a.store.AuthorizationStart(ctx, migration.BrowserAuthorization{StateDigest: stateDigest(started.State), TaskID: key.taskID,
		AccountID: key.accountID, Side: key.side, RedirectURI: redirectURI, CodeVerifier: migration.Password(started.Verifier), ExpiresAt: expires,
		AlsoAccept: who.alsoAccept})
	if err != nil {
		return migration.Authorization{}, err
	}
	a.replaceDevice(key, nil)
	return migration.Authorization{Flow: migration.FlowBrowser, AuthorizationURL: started.URL, ExpiresAt: expires}, nil
}

// Complete finishes a browser authorization with the address the provider
// sent the browser back to: its state names the authorization, its code is
// redeemed for the refresh token, or its error ends the flow. An address
// that names no authorization under way is an InvalidError.
func (a *Authorizer) Complete(ctx context.Context, address string) (migration.AuthorizedAccount, error) {
	u, err := url.Parse(strings.TrimSpace(address))
	query := url.Values{}
	if err == nil {
		query = u.Query()
	}
	state := query.Get("state")
	if state == "" {
		return migration.AuthorizedAccount{}, &migration.InvalidError{Field: "address",
			Reason: "carries no state: give the whole address the browser was sent to after the sign-in"}
	}
	pending, err := a.store.AuthorizationTake(ctx, stateDigest(state))
	if errors.Is(err, migration.ErrNotFound) {
		return migration.AuthorizedAccount{}, &migration.InvalidError{Field: "address",
			Reason: "names no authorization under way: it was finished, replaced by a newer one, or older than ten minutes; start again"}
	}
	if err != nil {
		return migration.AuthorizedAccount{}, err
	}
	key := authorizationKey{pending.TaskID, pending.AccountID, pending.Side}
	e, login, err := a.accountSide(ctx, key)
	if err != nil {
		return migration.AuthorizedAccount{}, err
	}
	done := migration.AuthorizedAccount{TaskID: key.taskID, AccountID: key.accountID, Side: key.side, Login: login}
	code, err := oauth.Returned(query)
	switch {
	case err != nil:
	case code == "":
		err = &migration.InvalidError{Field: "address", Reason: "carries neither a code nor an error"}
	default:
		var signed oauth.SignedIn
		if signed, err = ConfigOf(e.Auth.OAuth2).Exchange(ctx, pending.RedirectURI, code, string(pending.CodeVerifier)); err == nil {
			err = a.storeSignIn(ctx, key, signInNames{login, pending.AlsoAccept}, signed)
		}
	}
	a.logOutcome(ctx, key, login, err)
	var invalid *migration.InvalidError
	if err != nil && !errors.As(err, &invalid) {
		err = &migration.InvalidError{Field: "authorization", Reason: "ended without a token: " + err.Error()}
	}
	return done, err
}

// stateDigest is what is kept of a state: whoever reads the table cannot
// finish a flow with it.
func stateDigest(state string) []byte {
	digest := sha256.Sum256([]byte(state))
	return digest[:]
}

// storeSignIn keeps the account side's new refresh token, when the user
// who signed in is the account's (who): otherwise nothing is stored.
func (a *Authorizer) storeSignIn(ctx context.Context, key authorizationKey, who signInNames, signed oauth.SignedIn) error {
	if err := migration.SignedInAs(who.login, who.alsoAccept, signed.Identities); err != nil {
		return err
	}
	return persist.Outcome(ctx, a.logger, func(ctx context.Context) error {
		return a.store.AccountSecretRotated(ctx, key.taskID, key.accountID, key.side, migration.Password(signed.RefreshToken))
	})
}

// logOutcome logs how an authorization ended as the account's event.
func (a *Authorizer) logOutcome(ctx context.Context, key authorizationKey, login string, err error) {
	event := migration.Event{Kind: migration.EventAccountAuthorized, TaskID: key.taskID, AccountID: key.accountID, Side: key.side, Login: login,
		Message: fmt.Sprintf("%s: the %s's refresh token is stored; the account can log in", login, key.side)}
	if err != nil {
		event.Kind, event.Error = migration.EventError, err.Error()
		event.Message = fmt.Sprintf("%s: the %s's authorization ended without a token; start it again", login, key.side)
	}
	if err := a.store.EventAppend(context.WithoutCancel(ctx), event); err != nil {
		a.logger.Error("an authorization's outcome was not logged", "task", key.taskID, "account", key.accountID, "err", err)
	}
}

// ConfigOf is the token client of an endpoint's OAuth 2.0 application.
func ConfigOf(o migration.OAuth2Settings) oauth.Config {
	return oauth.Config{TokenURL: o.TokenURL, DeviceURL: o.DeviceURL, AuthorizationURL: o.AuthorizationURL, ClientID: o.ClientID, ClientSecret: string(o.ClientSecret),
		Scopes: strings.Fields(o.Scope)}
}
