package oauth

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// A user's sign-in (the device and browser flows) asks for the OpenID
// Connect scopes besides the application's, so that the provider says
// who signed in (an ID token): the service checks that it is the
// account's user before it keeps the token (signin.Authorizer).

// identityScopes are the scopes that make a provider name the user who
// signed in: openid for the ID token, email for the address in it.
var identityScopes = []string{"openid", "email"}

// signInConfig is c for a user's sign-in: its scopes and identityScopes.
func (c Config) signInConfig(redirectURI string) *oauth2.Config {
	config := c.oauth2Config(redirectURI)
	config.Scopes = slices.Clone(config.Scopes)
	for _, scope := range identityScopes {
		if !slices.Contains(config.Scopes, scope) {
			config.Scopes = append(config.Scopes, scope)
		}
	}
	return config
}

// SignedIn is what a user's sign-in gives: the refresh token, and the
// names the provider gave the user who signed in.
type SignedIn struct {
	RefreshToken string
	// Identities are the ID token's names of the user: email,
	// preferred_username (Microsoft's sign-in name), upn and unique_name
	// (Microsoft's older tokens); none when the provider sent no ID token.
	Identities []string
}

// signedIn reads a sign-in's token. The ID token came from the token
// endpoint over TLS, which OpenID Connect Core §3.1.3.7 lets stand for
// its signature; a token that does not parse names no one.
func signedIn(token *oauth2.Token) (SignedIn, error) {
	refresh, err := refreshTokenOf(token)
	if err != nil {
		return SignedIn{}, err
	}
	out := SignedIn{RefreshToken: refresh}
	raw, _ := token.Extra("id_token").(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return out, nil
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return out, nil
	}
	var claims map[string]any
	if json.Unmarshal(payload, &claims) != nil {
		return out, nil
	}
	for _, name := range []string{"email", "preferred_username", "upn", "unique_name"} {
		if v, ok := claims[name].(string); ok && v != "" && !slices.Contains(out.Identities, v) {
			out.Identities = append(out.Identities, v)
		}
	}
	return out, nil
}
