// Package oauth hands out OAuth 2.0 access tokens for IMAP logins
// (XOAUTH2, OAUTHBEARER): from a user's refresh token (RFC 6749 §6), or
// for an application alone (client credentials, §4.4: Microsoft 365's
// app-only access). A Source keeps its token and fetches a new one a
// margin before it expires, so that every connection of a long attempt logs in
// with a live token; a refresh token the server rotates is handed back to
// be stored.
package oauth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// Config is an application registered with an authorization server.
type Config struct {
	TokenURL  string
	DeviceURL string // the device authorization endpoint (RFC 8628), if any
	// AuthorizationURL is the authorization endpoint a user signs in at
	// in a browser (RFC 6749 §3.1), if any.
	AuthorizationURL string
	ClientID         string
	ClientSecret     string // "" for a public client
	Scopes           []string
	// Early is how long before its expiry a token is replaced; 5 minutes
	// when zero.
	Early time.Duration
	// HTTPClient reaches the token endpoint; one with a 30 s timeout when
	// nil.
	HTTPClient *http.Client
}

// Source hands out access tokens for one identity. It is safe for
// concurrent use.
type Source struct {
	tokens oauth2.TokenSource
	mu     sync.Mutex
	// refresh is the refresh token in use; rotated is told a new one.
	refresh string
	rotated func(refreshToken string)
	// clientSecret is the application's, taken out of the authorization
	// server's answers with the refresh token.
	clientSecret string
}

// ForUser is a Source of tokens acting for the user whose refresh token it
// is. rotated, if not nil, is called with a new refresh token when the
// server replaces it, to be stored for the next attempt.
func (c Config) ForUser(refreshToken string, rotated func(refreshToken string)) *Source {
	conf := c.oauth2Config("")
	s := &Source{refresh: refreshToken, rotated: rotated, clientSecret: c.ClientSecret}
	ctx := c.context()
	fetch := fetcher(func() (*oauth2.Token, error) {
		// A token without an access token is refreshed at once; x/oauth2
		// keeps the refresh token when the answer carries none.
		return conf.TokenSource(ctx, &oauth2.Token{RefreshToken: s.refreshToken()}).Token()
	})
	s.tokens = oauth2.ReuseTokenSourceWithExpiry(nil, fetch, c.early())
	return s
}

// ForApplication is a Source of the application's own tokens (client
// credentials), for every mailbox it was granted.
func (c Config) ForApplication() *Source {
	conf := &clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: c.Scopes,
		TokenURL: c.TokenURL, AuthStyle: oauth2.AuthStyleInParams}
	ctx := c.context()
	return &Source{tokens: oauth2.ReuseTokenSourceWithExpiry(nil, fetcher(func() (*oauth2.Token, error) { return conf.Token(ctx) }), c.early()),
		clientSecret: c.ClientSecret}
}

// fetcher gets a new token on every call; the Source's reuse keeps it
// until Early before its expiry. (x/oauth2's own sources reuse a token
// until 10 s before, which would hide the margin.)
type fetcher func() (*oauth2.Token, error)

func (f fetcher) Token() (*oauth2.Token, error) { return f() }

func (s *Source) refreshToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refresh
}

func (c Config) early() time.Duration {
	if c.Early > 0 {
		return c.Early
	}
	return 5 * time.Minute
}

// context carries the HTTP client to x/oauth2, which keeps the context of
// a token source for every refresh: it must not be a request's.
func (c Config) context() context.Context {
	return c.withClient(context.Background())
}

// withClient carries the HTTP client to x/oauth2 for one call.
func (c Config) withClient(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, c.httpClient())
}

// oauth2Config is the application for x/oauth2; redirectURI is the
// browser flow's, sent with its code only.
func (c Config) oauth2Config(redirectURI string) *oauth2.Config {
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: c.Scopes, RedirectURL: redirectURI,
		Endpoint: oauth2.Endpoint{TokenURL: c.TokenURL, DeviceAuthURL: c.DeviceURL, AuthURL: c.AuthorizationURL, AuthStyle: oauth2.AuthStyleInParams}}
}

func (c Config) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// Token returns a live access token, fetching a new one when the one held
// is about to expire. ctx bounds the wait for another caller's fetch only:
// a fetch under way runs to its own timeout.
func (s *Source) Token(ctx context.Context) (string, error) {
	type result struct {
		token *oauth2.Token
		err   error
	}
	done := make(chan result, 1)
	go func() {
		t, err := s.tokens.Token()
		done <- result{t, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if r.err != nil {
		return "", describe(r.err, s.refreshToken(), s.clientSecret)
	}
	s.noteRefreshToken(r.token.RefreshToken)
	return r.token.AccessToken, nil
}

func (s *Source) noteRefreshToken(token string) {
	s.mu.Lock()
	changed := token != "" && token != s.refresh
	if changed {
		s.refresh = token
	}
	rotated := s.rotated
	s.mu.Unlock()
	if changed && rotated != nil {
		rotated(token)
	}
}

// RefusedError is the authorization server's refusal to hand out a
// token: a revoked or expired refresh token, a wrong client secret, a
// consent withdrawn. Trying again does not help; a person must act.
type RefusedError struct {
	Code        string // RFC 6749 §5.2: invalid_grant, invalid_client, …
	Description string
	Advice      string // what to do, where the grant knows better than the code
}

// Refused says that trying again does not help (the copy engine reads it
// as an authentication failure).
func (e *RefusedError) Refused() bool { return true }

func (e *RefusedError) Error() string {
	advice := cmp.Or(e.Advice, codeAdvice(e.Code))
	text := "the token endpoint refused: " + e.Code
	if e.Description != "" {
		text += " (" + firstLine(e.Description) + ")"
	}
	return text + "; " + advice
}

// codeAdvice is what to do about an RFC 6749 §5.2 error code.
func codeAdvice(code string) string {
	switch code {
	case "invalid_grant":
		return "the refresh token was revoked or has expired: the user must authorize again and the account get the new token"
	case "invalid_client", "unauthorized_client":
		return "the client id or secret is wrong or expired: fix them on the endpoint"
	case "invalid_scope":
		return "the application lacks the permission asked for: grant it (and admin consent) on the provider's side"
	}
	return "check the endpoint's OAuth 2.0 settings"
}

// describe turns x/oauth2's errors into a RefusedError where the server
// answered with an OAuth error, and keeps the others (network trouble,
// timeouts), which a later try may overcome. What the server said is
// scrubbed of known (the request's own secrets) and of anything shaped
// like a credential, and an answer that is no OAuth error is told by its
// status alone: a token endpoint may echo the request, secrets and all,
// and these words go to the account's error, events, reports and logs.
func describe(err error, known ...string) error {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return err // described already
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode == "" {
		// x/oauth2/jwt leaves the RFC 6749 §5.2 error in the body.
		var body struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(re.Body, &body) == nil {
			re.ErrorCode, re.ErrorDescription = body.Error, body.Description
		}
	}
	switch {
	case re == nil:
		return fmt.Errorf("token endpoint: %w", err)
	case re.ErrorCode != "":
		return &RefusedError{Code: secret.Scrub(re.ErrorCode, known...), Description: secret.Scrub(re.ErrorDescription, known...)}
	case re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500:
		return &RefusedError{Code: fmt.Sprintf("HTTP %d", re.Response.StatusCode)}
	case re.Response != nil:
		return fmt.Errorf("token endpoint: the authorization server answered HTTP %d", re.Response.StatusCode)
	}
	return errors.New("token endpoint: the authorization server's answer could not be read")
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
