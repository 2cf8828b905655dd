package oauth

import (
	"cmp"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"
)

// ServiceAccountKey is the JSON key file of a Google service account, as
// the Google Cloud console hands it out ("Create and delete service
// account keys"): with domain-wide delegation granted in the Workspace
// admin console, it gets a token acting for any user of the domain
// (RFC 7523: a JWT it signs, with the user as subject).
type ServiceAccountKey struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	ClientID     string `json:"client_id"`
	PrivateKey   string `json:"private_key"`
	PrivateKeyID string `json:"private_key_id"`
	TokenURI     string `json:"token_uri"`
}

// ParseServiceAccountKey reads a service account's JSON key file and
// checks that its private key can sign.
func ParseServiceAccountKey(data []byte) (ServiceAccountKey, error) {
	var k ServiceAccountKey
	if err := json.Unmarshal(data, &k); err != nil {
		return k, fmt.Errorf("not a service account's JSON key file: %w", err)
	}
	if k.Type != "service_account" || k.ClientEmail == "" || k.PrivateKey == "" {
		return k, errors.New(`not a service account's JSON key file: it needs "type": "service_account", "client_email" and "private_key"`)
	}
	block, _ := pem.Decode([]byte(k.PrivateKey))
	if block == nil {
		return k, errors.New("the key file's private_key is not a PEM key")
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if _, err1 := x509.ParsePKCS1PrivateKey(block.Bytes); err1 != nil {
			return k, fmt.Errorf("the key file's private_key cannot be read: %w", err)
		}
	}
	return k, nil
}

// ForDelegatedUser is a Source of tokens a service account gets acting
// for user (Google's domain-wide delegation). The token endpoint is
// c.TokenURL, or the key's own.
func (c Config) ForDelegatedUser(key ServiceAccountKey, user string) *Source {
	conf := &jwt.Config{Email: key.ClientEmail, PrivateKey: []byte(key.PrivateKey), PrivateKeyID: key.PrivateKeyID,
		Scopes: c.Scopes, TokenURL: cmp.Or(c.TokenURL, key.TokenURI), Subject: user}
	ctx := c.context()
	return &Source{tokens: oauth2.ReuseTokenSourceWithExpiry(nil, fetcher(func() (*oauth2.Token, error) {
		t, err := conf.TokenSource(ctx).Token()
		if err != nil {
			err = describe(err)
		}
		var refused *RefusedError
		if errors.As(err, &refused) && (refused.Code == "unauthorized_client" || refused.Code == "access_denied") {
			refused.Advice = "the service account may not act for the domain's users with this scope: grant it domain-wide delegation " +
				"(Google Workspace admin console, Security, API controls) for client id " + cmp.Or(key.ClientID, key.ClientEmail) +
				" and the scope https://mail.google.com/"
		}
		return t, err
	}), c.early())}
}
