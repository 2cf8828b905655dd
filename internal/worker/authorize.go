package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/oauth"
)

// AuthorizeStore is what device authorizations need of storage.
type AuthorizeStore interface {
	TaskEndpoints(ctx context.Context, taskID int64) (src, dst migration.Endpoint, err error)
	AccountGet(ctx context.Context, taskID, id int64) (migration.Account, error)
	AccountSecretRotated(ctx context.Context, taskID, id int64, side string, token migration.Password) error
	EventAppend(ctx context.Context, e migration.Event) error
}

// Authorizer gets accounts their refresh tokens with the device
// authorization grant (RFC 8628): it asks the endpoint's authorization
// server for a user code, which a person enters on the provider's page
// while signing in as the account's user, and waits for the consent in
// the background; the refresh token is then stored as the account's, and
// an event says so. A flow lives in this process only: after a restart a
// person starts another (the codes last minutes).
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

// Start begins a device authorization for the account's side; a flow of
// the same side under way is replaced.
func (a *Authorizer) Start(ctx context.Context, taskID, accountID int64, side string) (migration.DeviceAuthorization, error) {
	if side != "source" && side != "destination" {
		return migration.DeviceAuthorization{}, &migration.InvalidError{Field: "side", Reason: "must be source|destination"}
	}
	src, dst, err := a.store.TaskEndpoints(ctx, taskID)
	if err != nil {
		return migration.DeviceAuthorization{}, err
	}
	account, err := a.store.AccountGet(ctx, taskID, accountID) // the logins; no secret is opened
	if err != nil {
		return migration.DeviceAuthorization{}, err
	}
	e, login := src, account.SourceLogin
	if side == "destination" {
		e, login = dst, account.DestinationLogin
	}
	if e.Auth.AccountSecret() != migration.SecretRefreshToken {
		return migration.DeviceAuthorization{}, &migration.InvalidError{Field: "side",
			Reason: fmt.Sprintf("%s: the %s endpoint takes no refresh tokens (auth oauth2 with grant refresh_token)", side, side)}
	}
	o := e.Auth.OAuth2
	if o.DeviceURL == "" {
		return migration.DeviceAuthorization{}, &migration.InvalidError{Field: "auth.oauth2.device_url",
			Reason: "is not set on the " + side + " endpoint: the device authorization needs it"}
	}
	config := oauthConfig(o)
	started, err := config.StartDevice(ctx)
	if err != nil {
		return migration.DeviceAuthorization{}, &migration.InvalidError{Field: "device authorization", Reason: "did not start: " + err.Error()}
	}
	key := authorizationKey{taskID, accountID, side}
	flowCtx, cancel := context.WithDeadline(context.Background(), started.Expires)
	flow := &deviceFlow{cancel: cancel}
	a.mu.Lock()
	if earlier := a.flows[key]; earlier != nil {
		earlier.cancel()
	}
	a.flows[key] = flow
	a.mu.Unlock()
	go a.await(flowCtx, flow, key, login, config, started)
	return migration.DeviceAuthorization{UserCode: started.UserCode, VerificationURI: started.VerificationURI,
		VerificationURIComplete: started.VerificationURIComplete, ExpiresAt: started.Expires}, nil
}

// await waits for the user's consent and stores the refresh token.
func (a *Authorizer) await(ctx context.Context, flow *deviceFlow, key authorizationKey, login string, config oauth.Config, started *oauth.DeviceAuthorization) {
	defer func() {
		a.mu.Lock()
		if a.flows[key] == flow { // not a newer flow of the side
			delete(a.flows, key)
		}
		a.mu.Unlock()
		flow.cancel()
	}()
	token, err := config.AwaitDevice(ctx, started)
	if err == nil {
		err = persist(ctx, a.logger, func(ctx context.Context) error {
			return a.store.AccountSecretRotated(ctx, key.taskID, key.accountID, key.side, migration.Password(token))
		})
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return // a newer flow of the same side replaced this one
	}
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
