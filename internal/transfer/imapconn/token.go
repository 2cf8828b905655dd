package imapconn

import (
	"context"
	"errors"
	"fmt"

	"github.com/emersion/go-sasl"
)

// TokenSource hands out OAuth 2.0 access tokens for one side, live for at
// least the login: each connection asks for one, so a long attempt logs in
// again with a fresh token after its first one expired.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenMechanism is the SASL mechanism that carries a bearer token.
type TokenMechanism string

const (
	// XOAuth2 is Google's and Microsoft's XOAUTH2
	// ("user=…^Aauth=Bearer …^A^A").
	XOAuth2 TokenMechanism = "XOAUTH2"
	// OAuthBearer is RFC 7628's OAUTHBEARER.
	OAuthBearer TokenMechanism = "OAUTHBEARER"
)

// mechanism is the side's token mechanism, XOAUTH2 unless set.
func (side *Side) mechanism() TokenMechanism {
	if side.TokenMechanism == "" {
		return XOAuth2
	}
	return side.TokenMechanism
}

// errNoMechanism refuses a token login on a server without its mechanism:
// a setting to change (the other mechanism), not a fault to retry.
var errNoMechanism = errors.New("no SASL mechanism for the token")

// AccessToken fetches the side's access token; a refusal is an authentication
// failure, anything else (the token endpoint unreachable) transient.
func (side *Side) AccessToken(ctx context.Context) (string, error) {
	token, err := side.Token.Token(ctx)
	if err != nil {
		return "", &tokenError{err: err}
	}
	return token, nil
}

// tokenError is a failure to get a token, before any word to the IMAP
// server.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// tokenKind classifies a failure to get a token: the authorization
// server's refusal (an error whose Refused method says so, as
// oauth.RefusedError's: a revoked refresh token, a wrong client secret) is
// an authentication failure that a person must mend, never retried;
// anything else (the token endpoint unreachable) may pass.
func tokenKind(err error) Kind {
	var refusal interface{ Refused() bool }
	if errors.As(err, &refusal) && refusal.Refused() {
		return KindAuth
	}
	return KindTransient
}

// TokenRefused reports whether err is the authorization server's refusal
// to hand out a token, before any word to the IMAP server.
func TokenRefused(err error) bool {
	var te *tokenError
	return errors.As(err, &te) && tokenKind(err) == KindAuth
}

// SASLToken is the SASL client of side's mechanism for token.
func (side *Side) SASLToken(token string) sasl.Client {
	if side.mechanism() == OAuthBearer {
		return sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: side.Login, Token: token, Host: side.Host, Port: side.Port})
	}
	return &xoauth2Client{login: side.Login, token: token}
}

// xoauth2Client speaks XOAUTH2: one message; a refusal comes as a
// challenge of JSON details, answered with an empty response, then NO.
type xoauth2Client struct {
	login, token string
	details      string // the refusal's challenge, for the error
}

func (c *xoauth2Client) Start() (string, []byte, error) {
	return string(XOAuth2), xoauth2Response(c.login, c.token), nil
}

func (c *xoauth2Client) Next(challenge []byte) ([]byte, error) {
	c.details = string(challenge)
	return []byte{}, nil
}

func xoauth2Response(login, token string) []byte {
	return []byte("user=" + login + "\x01auth=Bearer " + token + "\x01\x01")
}

// withDetails adds a refusal's JSON details to the server's NO.
func withDetails(err error, details string) error {
	if err == nil || details == "" {
		return err
	}
	return fmt.Errorf("%w %s", err, details)
}
