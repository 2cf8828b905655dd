package migration

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OAuth2Grant is how an OAuth 2.0 endpoint's application gets tokens.
type OAuth2Grant string

// The grants of an OAuth 2.0 endpoint.
const (
	// GrantRefreshToken: each account's refresh token, from the user's
	// consent (delegated access: Microsoft 365, Google).
	GrantRefreshToken OAuth2Grant = "refresh_token"
	// GrantClientCredentials: the application's own token for every
	// mailbox it was granted (Microsoft 365 app-only: IMAP.AccessAsApp and
	// an Exchange service principal with FullAccess).
	GrantClientCredentials OAuth2Grant = "client_credentials"
	// GrantServiceAccount: a Google service account with domain-wide
	// delegation acts for each account's user (RFC 7523); its JSON key
	// file is the client secret.
	GrantServiceAccount OAuth2Grant = "service_account"
)

// OAuth2Grants are every OAuth2Grant, in the order the API lists them.
var OAuth2Grants = []OAuth2Grant{GrantRefreshToken, GrantClientCredentials, GrantServiceAccount}

// usesClientSecret reports whether the grant cannot work without the
// endpoint's client secret (the key file of a service account).
func (g OAuth2Grant) usesClientSecret() bool {
	return g == GrantClientCredentials || g == GrantServiceAccount
}

// serviceAccountKey reads what the settings need of a service account's
// JSON key file (the engine reads the private key).
type serviceAccountKey struct {
	Type        string `json:"type"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
	TokenURI    string `json:"token_uri"`
}

// takeServiceAccountKey compacts the key file given as client secret
// (a pretty-printed JSON file has line breaks), and fills in the client
// id and token endpoint from it where they are empty.
func (o *OAuth2Settings) takeServiceAccountKey() error {
	if o.Grant != GrantServiceAccount || o.ClientSecret == "" {
		return nil
	}
	var compact bytes.Buffer
	var key serviceAccountKey
	if json.Compact(&compact, []byte(o.ClientSecret)) != nil || json.Unmarshal(compact.Bytes(), &key) != nil ||
		key.Type != "service_account" || key.ClientEmail == "" || key.PrivateKey == "" {
		return invalid("auth.oauth2.client_secret", `must be the service account's JSON key file ("type": "service_account", with client_email and private_key)`)
	}
	o.ClientSecret = Password(compact.String())
	o.ClientID = cmp.Or(strings.TrimSpace(o.ClientID), key.ClientEmail)
	o.TokenURL = cmp.Or(strings.TrimSpace(o.TokenURL), key.TokenURI)
	return nil
}

// TokenMechanism is the SASL mechanism that carries the token.
type TokenMechanism string

// The token mechanisms.
const (
	MechanismXOAuth2     TokenMechanism = "xoauth2"     // Google's and Microsoft's
	MechanismOAuthBearer TokenMechanism = "oauthbearer" // RFC 7628
)

// TokenMechanisms are every TokenMechanism, in the order the API lists them.
var TokenMechanisms = []TokenMechanism{MechanismXOAuth2, MechanismOAuthBearer}

// OAuth2Provider fills in a provider's token endpoint and scopes.
type OAuth2Provider string

// The providers whose settings are known.
const (
	ProviderMicrosoft365 OAuth2Provider = "microsoft365"
	ProviderGoogle       OAuth2Provider = "google"
)

// OAuth2Providers are every OAuth2Provider, in the order the API lists
// them.
var OAuth2Providers = []OAuth2Provider{ProviderMicrosoft365, ProviderGoogle}

// Limits on the OAuth 2.0 settings.
const (
	MaxURLBytes          = 2048
	MaxClientSecretBytes = 4096
	// MaxRefreshTokenBytes: Microsoft's refresh tokens run to a few
	// kilobytes.
	MaxRefreshTokenBytes = 16384
)

// OAuth2Settings are an OAuth 2.0 endpoint's application.
type OAuth2Settings struct {
	Grant    OAuth2Grant
	TokenURL string
	// DeviceURL is the device authorization endpoint (RFC 8628) that gets
	// an account its refresh token from the console or the CLI; optional.
	DeviceURL string
	// AuthorizationURL is the authorization endpoint a person signs in at
	// in a browser to get an account its refresh token; optional.
	AuthorizationURL string
	ClientID         string
	Scope            string // space-separated
	Mechanism        TokenMechanism
	// ClientSecret is written, never shown: on input an empty one keeps
	// the stored secret; reads fill it only for logging in.
	ClientSecret    Password
	ClientSecretSet bool
	// Provider and Tenant, on input only, fill in an empty TokenURL and
	// Scope with the provider's.
	Provider OAuth2Provider
	Tenant   string
}

// normalize checks o and fills in defaults and the provider's settings.
func (o *OAuth2Settings) normalize() error {
	if o.Grant == "" {
		o.Grant = GrantRefreshToken
	}
	if o.Mechanism == "" {
		o.Mechanism = MechanismXOAuth2
	}
	switch {
	case !slices.Contains(OAuth2Grants, o.Grant):
		return invalid("auth.oauth2.grant", "must be refresh_token|client_credentials|service_account")
	case !slices.Contains(TokenMechanisms, o.Mechanism):
		return invalid("auth.oauth2.mechanism", "must be xoauth2|oauthbearer")
	case o.Provider != "" && !slices.Contains(OAuth2Providers, o.Provider):
		return invalid("auth.oauth2.provider", "must be microsoft365|google, or left out")
	}
	if err := o.applyProvider(); err != nil {
		return err
	}
	if err := o.takeServiceAccountKey(); err != nil {
		return err
	}
	o.Provider, o.Tenant = "", ""
	o.ClientID, o.Scope, o.TokenURL = strings.TrimSpace(o.ClientID), strings.Join(strings.Fields(o.Scope), " "), strings.TrimSpace(o.TokenURL)
	switch {
	case o.ClientID == "":
		return invalid("auth.oauth2.client_id", "must not be empty with the oauth2 method")
	case !plainText(o.ClientID, MaxLoginBytes):
		return invalid("auth.oauth2.client_id", "must be UTF-8 without control characters, at most %d bytes", MaxLoginBytes)
	case !plainText(o.Scope, MaxLabelBytes):
		return invalid("auth.oauth2.scope", "must be UTF-8 without control characters, at most %d bytes", MaxLabelBytes)
	case len(o.ClientSecret) > MaxClientSecretBytes || strings.ContainsAny(string(o.ClientSecret), "\x00\r\n"):
		return invalid("auth.oauth2.client_secret", "must be at most %d bytes, without NUL, CR or LF", MaxClientSecretBytes)
	}
	if err := checkOAuthURL("auth.oauth2.token_url", o.TokenURL); err != nil {
		return err
	}
	if o.DeviceURL = strings.TrimSpace(o.DeviceURL); o.DeviceURL != "" {
		if err := checkOAuthURL("auth.oauth2.device_url", o.DeviceURL); err != nil {
			return err
		}
	}
	if o.AuthorizationURL = strings.TrimSpace(o.AuthorizationURL); o.AuthorizationURL != "" {
		return checkAuthorizationURL(o.AuthorizationURL)
	}
	return nil
}

// checkAuthorizationURL wants an absolute http(s) URL: the browser, not
// the service, goes there, and the code it brings back is of no use
// without the verifier the service keeps.
func checkAuthorizationURL(raw string) error {
	if _, ok := webURL(raw); !ok {
		return invalid("auth.oauth2.authorization_url", "must be an absolute https URL of at most %d bytes", MaxURLBytes)
	}
	return nil
}

// AuthorizationFlow is how a person gets an account its refresh token.
type AuthorizationFlow string

// The authorization flows.
const (
	// FlowDevice: the device authorization grant (RFC 8628), a code
	// entered on the provider's page.
	FlowDevice AuthorizationFlow = "device"
	// FlowBrowser: the authorization code grant with PKCE (RFC 6749 §4.1,
	// RFC 7636), a sign-in in a browser that comes back to a redirect URI.
	FlowBrowser AuthorizationFlow = "browser"
)

// AuthorizationFlows are every AuthorizationFlow, in the order the API
// lists them.
var AuthorizationFlows = []AuthorizationFlow{FlowDevice, FlowBrowser}

// BrowserAuthorizationLifetime is how long a browser authorization waits
// for the user to come back from the sign-in.
const BrowserAuthorizationLifetime = 10 * time.Minute

// Authorization is an authorization under way. Device flow: a person
// opens VerificationURI, enters UserCode and signs in as the account's
// user before ExpiresAt. Browser flow: a person opens AuthorizationURL
// and signs in before ExpiresAt.
type Authorization struct {
	Flow                    AuthorizationFlow
	UserCode                string
	VerificationURI         string
	VerificationURIComplete string
	AuthorizationURL        string
	ExpiresAt               time.Time
}

// BrowserAuthorization is what is kept of a browser authorization under
// way until the browser comes back: the state's SHA-256 digest, whose it
// is, where the browser comes back to, and the PKCE code verifier.
type BrowserAuthorization struct {
	StateDigest  []byte
	TaskID       int64
	AccountID    int64
	Side         string
	RedirectURI  string
	CodeVerifier Password
	ExpiresAt    time.Time
	// AlsoAccept are the other names the account's user may sign in as
	// (AuthorizationInput.AlsoAccept).
	AlsoAccept []string
}

// AuthorizationInput starts an authorization of an account's Side
// ("source", "destination"): Flow, or the endpoint's own; RedirectURI
// with the browser flow.
type AuthorizationInput struct {
	Side        string
	Flow        AuthorizationFlow
	RedirectURI string
	// AlsoAccept are other names the account's user may sign in as, beside
	// the side's login: the same mailbox under another name, declared by
	// whoever starts the authorization (CheckAlsoAccept).
	AlsoAccept []string
}

// MaxAlsoAccept bounds the names an authorization declares.
const MaxAlsoAccept = 10

// CheckAlsoAccept trims the names an authorization declares, and refuses
// too many, an empty one, or one that is no name.
func CheckAlsoAccept(names []string) ([]string, error) {
	if len(names) > MaxAlsoAccept {
		return nil, invalid("also_accept", "must hold at most %d names", MaxAlsoAccept)
	}
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = strings.TrimSpace(name)
		if err := checkName("also_accept", out[i], 320); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AuthorizedAccount is the account side whose refresh token an
// authorization stored.
type AuthorizedAccount struct {
	TaskID, AccountID int64
	Side, Login       string
}

// CheckRedirectURI wants an absolute http(s) URL without a fragment (RFC
// 6749 §3.1.2), for the browser flow.
func CheckRedirectURI(raw string) error {
	if raw == "" {
		return invalid("redirect_uri", "must be given for the browser flow")
	}
	if u, ok := webURL(raw); !ok || u.Fragment != "" {
		return invalid("redirect_uri", "must be an absolute http or https URL without a fragment, at most %d bytes", MaxURLBytes)
	}
	return nil
}

// applyProvider fills in the token endpoint and scopes the provider
// documents (Microsoft: "Authenticate an IMAP, POP or SMTP connection
// using OAuth"; Google: "OAuth 2.0 for IMAP and SMTP").
func (o *OAuth2Settings) applyProvider() error {
	switch o.Provider {
	case ProviderMicrosoft365:
		tenant := strings.TrimSpace(o.Tenant)
		if tenant == "" && o.Grant == GrantClientCredentials {
			return invalid("auth.oauth2.tenant", "must name the tenant (its id or domain) for app-only access")
		}
		if tenant == "" {
			tenant = "organizations"
		}
		if !plainText(tenant, MaxHostBytes) || strings.ContainsAny(tenant, "/?#") {
			return invalid("auth.oauth2.tenant", "must be a tenant id or domain")
		}
		if o.TokenURL == "" {
			o.TokenURL = "https://login.microsoftonline.com/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
		}
		if o.DeviceURL == "" && o.Grant == GrantRefreshToken {
			o.DeviceURL = "https://login.microsoftonline.com/" + url.PathEscape(tenant) + "/oauth2/v2.0/devicecode"
		}
		if o.AuthorizationURL == "" && o.Grant == GrantRefreshToken {
			o.AuthorizationURL = "https://login.microsoftonline.com/" + url.PathEscape(tenant) + "/oauth2/v2.0/authorize"
		}
		if o.Scope == "" && o.Grant == GrantClientCredentials {
			o.Scope = "https://outlook.office365.com/.default"
		}
		if o.Scope == "" {
			o.Scope = "https://outlook.office365.com/IMAP.AccessAsUser.All offline_access"
		}
	case ProviderGoogle:
		if o.Grant == GrantClientCredentials {
			return invalid("auth.oauth2.grant", "must be refresh_token with Google: it gives IMAP no application token")
		}
		if o.TokenURL == "" {
			o.TokenURL = "https://oauth2.googleapis.com/token"
		}
		if o.AuthorizationURL == "" && o.Grant == GrantRefreshToken {
			o.AuthorizationURL = "https://accounts.google.com/o/oauth2/v2/auth"
		}
		if o.Scope == "" {
			o.Scope = "https://mail.google.com/"
		}
	}
	return nil
}

// checkOAuthURL wants an https URL (the token or device endpoint), or
// http to this machine (a local proxy or a test's server): the client
// secret and tokens cross it.
func checkOAuthURL(field, raw string) error {
	if raw == "" {
		return invalid(field, "must not be empty with the oauth2 method (or choose a provider)")
	}
	u, ok := webURL(raw)
	if !ok {
		return invalid(field, "must be an absolute https URL of at most %d bytes", MaxURLBytes)
	}
	ip := net.ParseIP(u.Hostname())
	if u.Scheme != "https" && u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) { // webURL: http then
		return invalid(field, "must be https (http only to this machine): the client secret and tokens cross it")
	}
	return nil
}

// SignedInAs checks that a user's sign-in for an account (the device or
// browser flow) was the account's own user, login on that side, or a
// name declared for it (alsoAccept), by the names the provider gave the
// user who signed in (identities: the ID token's email,
// preferred_username, upn): whoever holds a sign-in link must not bind
// their own mailbox to the account. Names are compared without case, as
// mail addresses are in practice.
func SignedInAs(login string, alsoAccept, identities []string) error {
	if len(identities) == 0 {
		return &InvalidError{Field: "authorization", Reason: "kept no token: the provider did not say who signed in (no ID token); " +
			"the endpoint's application must be allowed the openid and email scopes"}
	}
	accepted := append([]string{login}, alsoAccept...)
	for _, name := range identities {
		for _, want := range accepted {
			if strings.EqualFold(strings.TrimSpace(name), strings.TrimSpace(want)) {
				return nil
			}
		}
	}
	return &InvalidError{Field: "authorization", Reason: fmt.Sprintf("kept no token: the sign-in was as %s, not as the account's user %s; "+
		"sign in as %s, or, if %s is the same mailbox under another name, start the authorization again with it in also_accept",
		identities[0], login, login, identities[0])}
}
