package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"
)

// BrowserAuthorization is an authorization code grant with PKCE (RFC 6749
// §4.1, RFC 7636) under way: the user opens URL and signs in; the
// provider then sends the browser to the redirect URI with a code, which
// Exchange redeems with Verifier. State ties the browser's return to it.
type BrowserAuthorization struct {
	URL      string
	State    string
	Verifier string
}

// StartBrowser makes the sign-in address for the user loginHint, with a
// fresh state and code verifier.
func (c Config) StartBrowser(redirectURI, loginHint string) (BrowserAuthorization, error) {
	if c.AuthorizationURL == "" {
		return BrowserAuthorization{}, errors.New("the endpoint has no authorization URL")
	}
	verifier, state := oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
	options := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", loginHint)}
	if u, err := url.Parse(c.AuthorizationURL); err == nil && u.Hostname() == "accounts.google.com" {
		// Google hands out a refresh token only for offline access, and
		// again for a user who consented before only when asked to
		// consent again ("Using OAuth 2.0 for Web Server Applications").
		// Microsoft reads offline_access in the scope instead, and a
		// forced consent would stop users who may not consent themselves.
		options = append(options, oauth2.AccessTypeOffline, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	return BrowserAuthorization{URL: c.signInConfig(redirectURI).AuthCodeURL(state, options...), State: state, Verifier: verifier}, nil
}

// Exchange redeems the code the provider sent the browser back with for
// the user's refresh token, and says who signed in.
func (c Config) Exchange(ctx context.Context, redirectURI, code, verifier string) (SignedIn, error) {
	token, err := c.signInConfig(redirectURI).Exchange(c.withClient(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return SignedIn{}, describe(err)
	}
	return signedIn(token)
}

// refreshTokenOf is the refresh token of a user's first token; an answer
// without one (a scope without offline access) is of no use to an attempt.
func refreshTokenOf(token *oauth2.Token) (string, error) {
	if token.RefreshToken == "" {
		return "", &RefusedError{Code: "no refresh token", Description: "the scope must include offline_access"}
	}
	return token.RefreshToken, nil
}

// Returned reads what the provider sent the browser back with: the code,
// or its refusal (RFC 6749 §4.1.2.1).
func Returned(query url.Values) (code string, err error) {
	if refusal := query.Get("error"); refusal != "" {
		err = fmt.Errorf("the provider answered %s", refusal)
		if description := query.Get("error_description"); description != "" {
			err = fmt.Errorf("%w (%s)", err, firstLine(description))
		}
		return "", err
	}
	return query.Get("code"), nil
}
