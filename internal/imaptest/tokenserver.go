package imaptest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TokenServer is a fake OAuth 2.0 authorization server: the token endpoint
// of RFC 6749 with the refresh_token grant (§6) and the client_credentials
// grant (§4.4), as Microsoft's identity platform (login.microsoftonline.com
// …/oauth2/v2.0/token) and Google's (oauth2.googleapis.com/token) answer
// them: a JSON body of access_token, token_type Bearer, expires_in and, for
// a user, refresh_token; refusals as 400 with "error" invalid_grant (a
// revoked, expired or unknown refresh token: Microsoft's AADSTS70008 and
// AADSTS50173, Google's "Token has been expired or revoked.") or
// invalid_client (a wrong client secret). Access tokens are opaque here;
// the IMAP fakes ask the server whom a token is for (Check).
//
// It also runs the device authorization grant (RFC 8628) as Microsoft's
// …/oauth2/v2.0/devicecode does: DeviceURL hands out a device code and a
// user code; the token endpoint answers authorization_pending until a
// test approves the user code for a user (Approve), then the user's
// tokens.
//
// And the authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636) as
// Microsoft's …/oauth2/v2.0/authorize and Google's
// accounts.google.com/o/oauth2/v2/auth run it for an installed or web
// application: AuthorizationURL shows a sign-in page (a form whose Accept
// or Cancel a test or a browser submits) and sends the browser to the
// redirect URI with a code and the state, or with error access_denied;
// the token endpoint redeems a code once, for the same client and
// redirect URI, with the verifier whose S256 challenge came with it.
// Redirect URIs are not registered here: any is taken.
type TokenServer struct {
	URL              string // the token endpoint
	DeviceURL        string // the device authorization endpoint
	AuthorizationURL string // the authorization endpoint

	mu       sync.Mutex
	lifetime time.Duration
	rotate   bool
	clients  map[string]string       // client id → secret ("" for a public client)
	refresh  map[string]refreshGrant // live refresh tokens
	access   map[string]AccessGrant  // issued access tokens
	issued   map[string]int          // access tokens issued, by grant type
	devices  map[string]*deviceGrant // by device code
	codes    map[string]codeGrant    // authorization codes not redeemed
	// serviceAccounts are Google service accounts' public keys by
	// email, and delegated those granted domain-wide delegation.
	serviceAccounts map[string]*rsa.PublicKey
	delegated       map[string]bool
}

type codeGrant struct {
	clientID, user, redirectURI, challenge, scope string
}

type deviceGrant struct {
	userCode, clientID, scope string
	user                      string // "" until approved
}

// TokenServerOptions shape a TokenServer.
type TokenServerOptions struct {
	// Lifetime of an access token; an hour when zero (both providers'
	// usual).
	Lifetime time.Duration
	// Rotate hands out a new refresh token with every refresh and revokes
	// the one used, as Microsoft may (Google keeps one).
	Rotate bool
}

type refreshGrant struct {
	user, clientID string
}

// AccessGrant is what an access token stands for.
type AccessGrant struct {
	// User the token acts for, or "" for an application's token
	// (client_credentials), which acts for any mailbox it was granted.
	User    string
	Client  string
	Expires time.Time
}

// StartTokenServer runs a TokenServer until t ends.
func StartTokenServer(t testing.TB, opts TokenServerOptions) *TokenServer {
	t.Helper()
	if opts.Lifetime == 0 {
		opts.Lifetime = time.Hour
	}
	s := &TokenServer{lifetime: opts.Lifetime, rotate: opts.Rotate, clients: map[string]string{},
		refresh: map[string]refreshGrant{}, access: map[string]AccessGrant{}, issued: map[string]int{}, devices: map[string]*deviceGrant{}, codes: map[string]codeGrant{}, serviceAccounts: map[string]*rsa.PublicKey{}, delegated: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/oauth2/v2.0/token", s.serveToken)
	mux.HandleFunc("/oauth2/v2.0/devicecode", s.serveDeviceCode)
	mux.HandleFunc("/oauth2/v2.0/authorize", s.serveAuthorize)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL, s.DeviceURL, s.AuthorizationURL = srv.URL+"/oauth2/v2.0/token", srv.URL+"/oauth2/v2.0/devicecode", srv.URL+"/oauth2/v2.0/authorize"
	return s
}

// AddClient registers an application: its id and secret ("" for a public
// client, which sends none).
func (s *TokenServer) AddClient(id, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[id] = secret
}

// IssueRefreshToken is a user's consent to client, as an authorization
// flow ends: the refresh token an administrator then gives the service.
func (s *TokenServer) IssueRefreshToken(user, client string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	token := "rt-" + rand.Text()
	s.refresh[token] = refreshGrant{user: user, clientID: client}
	return token
}

// PendingUserCodes are the user codes of the device flows not approved
// yet.
func (s *TokenServer) PendingUserCodes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var codes []string
	for _, d := range s.devices {
		if d.user == "" {
			codes = append(codes, d.userCode)
		}
	}
	return codes
}

// Approve is the user's consent on the verification page for the device
// flow of userCode; false when no flow has that code.
func (s *TokenServer) Approve(userCode, user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.userCode == userCode {
			d.user = user
			return true
		}
	}
	return false
}

func (s *TokenServer) serveDeviceCode(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		tokenError(w, http.StatusBadRequest, "invalid_request", "POST a form")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	clientID := r.PostForm.Get("client_id")
	if _, known := s.clients[clientID]; !known {
		tokenError(w, http.StatusBadRequest, "invalid_client", "AADSTS700016: Application not found in the directory.")
		return
	}
	device, user := "dc-"+rand.Text(), rand.Text()[:8]
	s.devices[device] = &deviceGrant{userCode: user, clientID: clientID, scope: r.PostForm.Get("scope")}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"device_code": device, "user_code": user, //nolint:errcheck // a client that left is no matter
		"verification_uri": "https://microsoft.com/devicelogin", "expires_in": 900, "interval": 1,
		"message": "To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code " + user + " to authenticate."})
}

// Revoke withdraws a refresh token, as a user who changes their password
// or an administrator who revokes sessions does.
func (s *TokenServer) Revoke(refreshToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refresh, refreshToken)
}

// Check says whom a live access token acts for.
func (s *TokenServer) Check(token string) (AccessGrant, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.access[token]
	if !ok || time.Now().After(g.Expires) {
		return AccessGrant{}, false
	}
	return g, true
}

// Issued counts the access tokens handed out for a grant type
// ("refresh_token", "client_credentials").
func (s *TokenServer) Issued(grantType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued[grantType]
}

func (s *TokenServer) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if r.PostForm.Get("grant_type") == jwtBearer {
		s.serveAssertion(w, r)
		return
	}
	clientID, secret, basic := r.BasicAuth()
	if !basic {
		clientID, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want, known := s.clients[clientID]
	if !known || secret != want {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
		return
	}
	grantType := r.PostForm.Get("grant_type")
	var user, newRefresh, signedInScope string
	switch grantType {
	case "refresh_token":
		used := r.PostForm.Get("refresh_token")
		g, ok := s.refresh[used]
		if !ok || g.clientID != clientID {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "AADSTS70008: The provided authorization code or refresh token has expired or was revoked.")
			return
		}
		user = g.user
		if s.rotate {
			delete(s.refresh, used)
			newRefresh = "rt-" + rand.Text()
			s.refresh[newRefresh] = g
		}
	case "urn:ietf:params:oauth:grant-type:device_code":
		d, ok := s.devices[r.PostForm.Get("device_code")]
		switch {
		case !ok || d.clientID != clientID:
			tokenError(w, http.StatusBadRequest, "expired_token", "AADSTS70019: Verification code expired.")
			return
		case d.user == "":
			tokenError(w, http.StatusBadRequest, "authorization_pending", "AADSTS70016: Pending end-user authorization.")
			return
		}
		delete(s.devices, r.PostForm.Get("device_code"))
		user, signedInScope = d.user, d.scope
		newRefresh = "rt-" + rand.Text()
		s.refresh[newRefresh] = refreshGrant{user: user, clientID: clientID}
	case "authorization_code":
		c, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		challenge := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case !ok || c.clientID != clientID:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "AADSTS70008: The provided authorization code or refresh token has expired or was revoked.")
			return
		case c.redirectURI != r.PostForm.Get("redirect_uri"):
			tokenError(w, http.StatusBadRequest, "invalid_grant", "AADSTS50148: The redirect_uri does not match the one of the authorization request.")
			return
		case base64.RawURLEncoding.EncodeToString(challenge[:]) != c.challenge:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request.")
			return
		}
		user, signedInScope = c.user, c.scope
		newRefresh = "rt-" + rand.Text()
		s.refresh[newRefresh] = refreshGrant{user: user, clientID: clientID}
	case "client_credentials":
		if secret == "" {
			tokenError(w, http.StatusUnauthorized, "invalid_client", "a public client cannot use client_credentials")
			return
		}
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q", grantType))
		return
	}
	access := "at-" + rand.Text()
	s.access[access] = AccessGrant{User: user, Client: clientID, Expires: time.Now().Add(s.lifetime)}
	s.issued[grantType]++
	body := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.lifetime.Seconds()),
		"scope": r.PostForm.Get("scope")}
	if newRefresh != "" {
		body["refresh_token"] = newRefresh
	}
	if slices.Contains(strings.Fields(signedInScope), "openid") {
		body["id_token"] = idToken(s.URL, clientID, user)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body) //nolint:errcheck // a client that left is no matter
}

// idToken is the OpenID Connect ID token of a user's sign-in (OpenID
// Connect Core §2), as Microsoft's names the user: preferred_username,
// and email. Its signature is not one: a client that gets it from the
// token endpoint over TLS may rely on TLS instead (§3.1.3.7).
func idToken(issuer, clientID, user string) string {
	part := func(v any) string {
		data, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	return part(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." +
		part(map[string]any{"iss": issuer, "aud": clientID, "sub": "sub-" + user, "preferred_username": user, "email": user,
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}) + ".c2lnbmF0dXJl"
}

// jwtBearer is the grant of RFC 7523 §2.1: a signed JWT asks for a token.
const jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// AddServiceAccount registers a Google service account, with domain-wide
// delegation or not, and returns its JSON key file as Google's console
// hands it out, token_uri this server.
func (s *TokenServer) AddServiceAccount(t testing.TB, email string, delegated bool) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.serviceAccounts[email], s.delegated[email] = &key.PublicKey, delegated
	s.mu.Unlock()
	file, err := json.MarshalIndent(map[string]string{"type": "service_account", "project_id": "migration", "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": email,
		"client_id": "1000" + fmt.Sprint(len(s.serviceAccounts)), "token_uri": s.URL}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// serveAssertion answers the JWT bearer grant as Google's token endpoint
// does for a service account ("Using OAuth 2.0 for Server to Server
// Applications"): an RS256 JWT from a known account, for this endpoint,
// not expired, with the user it acts for as "sub"; an account without
// domain-wide delegation gets unauthorized_client.
func (s *TokenServer) serveAssertion(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	var claims struct {
		Iss, Sub, Aud, Scope string
		Exp                  int64
	}
	if len(parts) != 3 {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "Invalid JWT: not three parts.")
		return
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(parts[1])
	signature, err2 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || json.Unmarshal(payload, &claims) != nil {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "Invalid JWT: undecodable.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	public := s.serviceAccounts[claims.Iss]
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch {
	case public == nil || rsa.VerifyPKCS1v15(public, crypto.SHA256, digest[:], signature) != nil:
		tokenError(w, http.StatusBadRequest, "invalid_grant", "Invalid JWT Signature.")
		return
	case claims.Aud != s.URL || time.Unix(claims.Exp, 0).Before(time.Now()):
		tokenError(w, http.StatusBadRequest, "invalid_grant", "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.")
		return
	case claims.Sub == "" || !s.delegated[claims.Iss]:
		tokenError(w, http.StatusUnauthorized, "unauthorized_client",
			"Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.")
		return
	}
	access := "at-" + rand.Text()
	s.access[access] = AccessGrant{User: claims.Sub, Client: claims.Iss, Expires: time.Now().Add(s.lifetime)}
	s.issued[jwtBearer]++
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.lifetime.Seconds())}) //nolint:errcheck // a client that left is no matter
}

// signInPage is the authorization endpoint's page: who signs in, and the
// consent to give or refuse.
var signInPage = template.Must(template.New("sign-in").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<h1>Sign in to {{.Get "client_id"}}</h1>
<form method="post">
{{range $name, $values := .}}<input type="hidden" name="{{$name}}" value="{{index $values 0}}">
{{end}}<label>Account <input name="user" value="{{.Get "login_hint"}}"></label>
<p>The application asks to read and write your mail ({{.Get "scope"}}).</p>
<button name="decision" value="accept">Accept</button>
<button name="decision" value="cancel">Cancel</button>
</form>
</body></html>
`))

// serveAuthorize shows the sign-in page (GET) and sends the browser back
// to the application with the outcome (POST). A request the provider
// cannot send back (an unknown client, no redirect URI, no S256
// challenge) gets an error page, as the providers show one.
func (s *TokenServer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.Form
	if _, known := s.clients[q.Get("client_id")]; !known {
		http.Error(w, "AADSTS700016: Application not found in the directory.", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case err != nil || !redirect.IsAbs():
		http.Error(w, "AADSTS90102: redirect_uri value must be a valid absolute URI.", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "AADSTS9002325: Proof Key for Code Exchange is required.", http.StatusBadRequest)
		return
	}
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		signInPage.Execute(w, q) //nolint:errcheck // a browser that left is no matter
		return
	}
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	if q.Get("decision") == "accept" && q.Get("user") != "" {
		code := "ac-" + rand.Text()
		s.codes[code] = codeGrant{clientID: q.Get("client_id"), user: q.Get("user"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
			scope: q.Get("scope")}
		back.Set("code", code)
	} else {
		back.Set("error", "access_denied")
		back.Set("error_description", "AADSTS65004: User declined to consent to access the app.")
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// SignIn is a user's visit to an authorization address: the sign-in page
// is shown, and the user signs in as user and accepts (or cancels). It
// returns the address the provider sends the browser to.
func (s *TokenServer) SignIn(t testing.TB, authorizationURL, user string, accept bool) string {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := noFollow.Get(authorizationURL)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Fatalf("the sign-in page at %s answered %s", authorizationURL, page.Status)
	}
	u, err := url.Parse(authorizationURL)
	if err != nil {
		t.Fatal(err)
	}
	form := u.Query()
	form.Set("user", user)
	form.Set("decision", map[bool]string{true: "accept", false: "cancel"}[accept])
	u.RawQuery = ""
	resp, err := noFollow.PostForm(u.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("the sign-in answered %s", resp.Status)
	}
	return resp.Header.Get("Location")
}

func tokenError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description}) //nolint:errcheck // as above
}
