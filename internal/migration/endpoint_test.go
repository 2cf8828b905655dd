package migration

import (
	"strings"
	"testing"
)

func TestEndpointNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		in       Endpoint
		wantPort int
		wantErr  string
	}{
		{"ssl default port", Endpoint{TLSMode: TLSModeSSL}, 993, ""},
		{"starttls default port", Endpoint{TLSMode: TLSModeSTARTTLS}, 143, ""},
		{"plain default port", Endpoint{TLSMode: TLSModePlain}, 143, ""},
		{"explicit port kept", Endpoint{TLSMode: TLSModeSSL, Port: 1143}, 1143, ""},
		{"highest port", Endpoint{TLSMode: TLSModeSSL, Port: 65535}, 65535, ""},
		{"empty mode", Endpoint{}, 0, "tls_mode must be ssl|starttls|plain"},
		{"unknown mode", Endpoint{TLSMode: "tls"}, 0, "tls_mode must be ssl|starttls|plain"},
		{"mode is case sensitive", Endpoint{TLSMode: "SSL"}, 0, "tls_mode must be ssl|starttls|plain"},
		{"port too high", Endpoint{TLSMode: TLSModeSSL, Port: 65536}, 0, "port must be between 1 and 65535, or 0 for the default of tls_mode"},
		{"negative port", Endpoint{TLSMode: TLSModeSSL, Port: -1}, 0, "port must be between 1 and 65535, or 0 for the default of tls_mode"},
		{"longest host", Endpoint{TLSMode: TLSModeSSL, Host: strings.Repeat("h", 253)}, 993, ""},
		{"host too long", Endpoint{TLSMode: TLSModeSSL, Host: strings.Repeat("h", 254)}, 0, "host must be at most 253 bytes"},
		{"label too long", Endpoint{TLSMode: TLSModeSSL, RoleLabel: strings.Repeat("l", 1025)}, 0, "role_label must be at most 1024 bytes"},
		{"label not UTF-8", Endpoint{TLSMode: TLSModeSSL, RoleLabel: "\xff"}, 0, "role_label must be valid UTF-8"},
		{"control character in host", Endpoint{TLSMode: TLSModeSSL, Host: "imap.example\r\nX: y"}, 0, "host must not contain control characters"},
		{"empty host and label allowed", Endpoint{TLSMode: TLSModePlain, Port: 10143}, 10143, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.in
			err := e.Normalize()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Port != tc.wantPort {
				t.Errorf("port %d, want %d", e.Port, tc.wantPort)
			}
		})
	}
}

func TestEndpointInUseErrorCountsTasks(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{1: "endpoint is used by 1 task", 2: "endpoint is used by 2 tasks"} {
		if got := (&EndpointInUseError{Tasks: n}).Error(); got != want {
			t.Errorf("%d tasks: %q, want %q", n, got, want)
		}
	}
}

func TestEndpointAuthNormalize(t *testing.T) {
	t.Parallel()
	master := func(login string, form MasterForm, password Password) EndpointAuth {
		return EndpointAuth{Method: AuthMaster, MasterLogin: login, MasterForm: form, MasterPassword: password}
	}
	for _, tc := range []struct {
		name    string
		in      EndpointAuth
		want    EndpointAuth
		wantErr string
	}{
		{"left out: kept", EndpointAuth{}, EndpointAuth{}, ""},
		{"password drops master settings", EndpointAuth{Method: AuthPassword, MasterLogin: "admin", MasterPassword: "x"}, EndpointAuth{Method: AuthPassword}, ""},
		{"master defaults to authzid", master(" admin ", "", "pw"), master("admin", MasterAuthzid, "pw"), ""},
		{"master with separator", master("admin", MasterSeparator, "pw"), master("admin", MasterSeparator, "pw"), ""},
		{"master without a password: one may be stored", master("admin", MasterAuthzid, ""), master("admin", MasterAuthzid, ""), ""},
		{"unknown method", EndpointAuth{Method: "kerberos"}, EndpointAuth{}, "auth.method must be password|master|oauth2"},
		{"unknown form", master("admin", "proxy", "pw"), EndpointAuth{}, "auth.master_form must be authzid|separator"},
		{"master without a login", master("  ", MasterAuthzid, "pw"), EndpointAuth{}, "auth.master_login must not be empty with the master method"},
		{"control character in the login", master("ad\nmin", MasterAuthzid, "pw"), EndpointAuth{}, "auth.master_login must be UTF-8 without control characters, at most 1024 bytes"},
		{"separator in a separator login", master("ad*min", MasterSeparator, "pw"), EndpointAuth{}, "auth.master_login must not contain * with the separator form, which joins account*master"},
		{"separator in an authzid login", master("ad*min", MasterAuthzid, "pw"), master("ad*min", MasterAuthzid, "pw"), ""},
		{"NUL in the password", master("admin", MasterAuthzid, "p\x00w"), EndpointAuth{}, "auth.master_password must be at most 1024 bytes, without NUL, CR or LF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := Endpoint{TLSMode: TLSModeSSL, Auth: tc.in}
			err := e.Normalize()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Auth != tc.want {
				t.Errorf("got %+v, want %+v", e.Auth, tc.want)
			}
		})
	}
}

func TestOAuth2SettingsNormalize(t *testing.T) {
	t.Parallel()
	const m365 = "https://login.microsoftonline.com/"
	for _, tc := range []struct {
		name    string
		in      OAuth2Settings
		want    OAuth2Settings
		wantErr string
	}{
		{"Microsoft 365, delegated", OAuth2Settings{Provider: ProviderMicrosoft365, ClientID: " app "},
			OAuth2Settings{Grant: GrantRefreshToken, Mechanism: MechanismXOAuth2, ClientID: "app", TokenURL: m365 + "organizations/oauth2/v2.0/token",
				DeviceURL: m365 + "organizations/oauth2/v2.0/devicecode", AuthorizationURL: m365 + "organizations/oauth2/v2.0/authorize", Scope: "https://outlook.office365.com/IMAP.AccessAsUser.All offline_access"}, ""},
		{"a device URL elsewhere", OAuth2Settings{ClientID: "app", TokenURL: "https://idp.example/token", DeviceURL: "http://idp.example/device"}, OAuth2Settings{},
			"auth.oauth2.device_url must be https (http only to this machine): the client secret and tokens cross it"},
		{"Microsoft 365, app-only", OAuth2Settings{Provider: ProviderMicrosoft365, Tenant: "contoso.onmicrosoft.com", Grant: GrantClientCredentials, ClientID: "app", ClientSecret: "s"},
			OAuth2Settings{Grant: GrantClientCredentials, Mechanism: MechanismXOAuth2, ClientID: "app", ClientSecret: "s",
				TokenURL: m365 + "contoso.onmicrosoft.com/oauth2/v2.0/token", Scope: "https://outlook.office365.com/.default"}, ""},
		{"Google", OAuth2Settings{Provider: ProviderGoogle, ClientID: "app", Mechanism: MechanismOAuthBearer},
			OAuth2Settings{Grant: GrantRefreshToken, Mechanism: MechanismOAuthBearer, ClientID: "app", TokenURL: "https://oauth2.googleapis.com/token",
				AuthorizationURL: "https://accounts.google.com/o/oauth2/v2/auth", Scope: "https://mail.google.com/"}, ""},
		{"own settings kept", OAuth2Settings{Provider: ProviderGoogle, ClientID: "app", TokenURL: "https://idp.example/token", AuthorizationURL: " https://idp.example/authorize ", Scope: " a   b "},
			OAuth2Settings{Grant: GrantRefreshToken, Mechanism: MechanismXOAuth2, ClientID: "app", TokenURL: "https://idp.example/token",
				AuthorizationURL: "https://idp.example/authorize", Scope: "a b"}, ""},
		{"an authorization URL not http", OAuth2Settings{ClientID: "app", TokenURL: "https://idp.example/token", AuthorizationURL: "javascript:alert(1)"}, OAuth2Settings{},
			"auth.oauth2.authorization_url must be an absolute https URL of at most 2048 bytes"},
		{"http to this machine", OAuth2Settings{ClientID: "app", TokenURL: "http://127.0.0.1:8081/token"},
			OAuth2Settings{Grant: GrantRefreshToken, Mechanism: MechanismXOAuth2, ClientID: "app", TokenURL: "http://127.0.0.1:8081/token"}, ""},
		{"http elsewhere", OAuth2Settings{ClientID: "app", TokenURL: "http://idp.example/token"}, OAuth2Settings{},
			"auth.oauth2.token_url must be https (http only to this machine): the client secret and tokens cross it"},
		{"no token URL", OAuth2Settings{ClientID: "app"}, OAuth2Settings{}, "auth.oauth2.token_url must not be empty with the oauth2 method (or choose a provider)"},
		{"no client", OAuth2Settings{Provider: ProviderGoogle}, OAuth2Settings{}, "auth.oauth2.client_id must not be empty with the oauth2 method"},
		{"app-only needs a tenant", OAuth2Settings{Provider: ProviderMicrosoft365, Grant: GrantClientCredentials, ClientID: "app"}, OAuth2Settings{},
			"auth.oauth2.tenant must name the tenant (its id or domain) for app-only access"},
		{"Google has no app-only", OAuth2Settings{Provider: ProviderGoogle, Grant: GrantClientCredentials, ClientID: "app"}, OAuth2Settings{},
			"auth.oauth2.grant must be refresh_token with Google: it gives IMAP no application token"},
		{"a tenant with a path", OAuth2Settings{Provider: ProviderMicrosoft365, Tenant: "a/../b", ClientID: "app"}, OAuth2Settings{}, "auth.oauth2.tenant must be a tenant id or domain"},
		{"unknown grant", OAuth2Settings{Grant: "password", ClientID: "app"}, OAuth2Settings{}, "auth.oauth2.grant must be refresh_token|client_credentials|service_account"},
		{"a service account's key file", OAuth2Settings{Provider: ProviderGoogle, Grant: GrantServiceAccount,
			ClientSecret: "{\n  \"type\": \"service_account\",\n  \"client_email\": \"m@acme.iam.gserviceaccount.com\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMII\\n-----END PRIVATE KEY-----\\n\"\n}\n"},
			OAuth2Settings{Grant: GrantServiceAccount, Mechanism: MechanismXOAuth2, ClientID: "m@acme.iam.gserviceaccount.com", TokenURL: "https://oauth2.googleapis.com/token",
				Scope: "https://mail.google.com/", ClientSecret: `{"type":"service_account","client_email":"m@acme.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n"}`}, ""},
		{"a service account without a key file", OAuth2Settings{Provider: ProviderGoogle, Grant: GrantServiceAccount, ClientSecret: `{"type":"authorized_user"}`}, OAuth2Settings{},
			`auth.oauth2.client_secret must be the service account's JSON key file ("type": "service_account", with client_email and private_key)`},
		{"unknown mechanism", OAuth2Settings{Mechanism: "plain", ClientID: "app"}, OAuth2Settings{}, "auth.oauth2.mechanism must be xoauth2|oauthbearer"},
		{"unknown provider", OAuth2Settings{Provider: "yahoo", ClientID: "app"}, OAuth2Settings{}, "auth.oauth2.provider must be microsoft365|google, or left out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := Endpoint{TLSMode: TLSModeSSL, Auth: EndpointAuth{Method: AuthOAuth2, OAuth2: tc.in, MasterLogin: "dropped"}}
			err := e.Normalize()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := (EndpointAuth{Method: AuthOAuth2, OAuth2: tc.want}); e.Auth != want {
				t.Errorf("got %+v, want %+v", e.Auth, want)
			}
		})
	}
}

// TestSignedInAs: a sign-in is the account's when one of the names the
// provider gave matches its login, without case; otherwise, or without
// any name, it is refused in words that say who signed in and what to do.
func TestSignedInAs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, login string
		alsoAccept  []string
		identities  []string
		refusal     string // "" for accepted
	}{
		{"the email", "ann@example.com", nil, []string{"ann@example.com"}, ""},
		{"another case", "Ann@Example.com", nil, []string{"ann@example.com"}, ""},
		{"the sign-in name after the email", "ann@corp.example", nil, []string{"ann.smith@example.com", "ann@corp.example"}, ""},
		{"a declared name", "ann@contoso.com", []string{"ann@contoso.onmicrosoft.com"}, []string{"Ann@Contoso.onmicrosoft.com"}, ""},
		{"someone else", "ann@example.com", nil, []string{"mallory@elsewhere.example"},
			"authorization kept no token: the sign-in was as mallory@elsewhere.example, not as the account's user ann@example.com; " +
				"sign in as ann@example.com, or, if mallory@elsewhere.example is the same mailbox under another name, start the authorization again with it in also_accept"},
		{"someone else than the names declared", "ann@contoso.com", []string{"ann@contoso.onmicrosoft.com"}, []string{"mallory@contoso.onmicrosoft.com"},
			"not as the account's user ann@contoso.com"},
		{"a prefix is not a match", "ann@example.com", nil, []string{"ann@example.co"}, "not as the account's user"},
		{"no name", "ann@example.com", nil, nil, "the provider did not say who signed in (no ID token)"},
	} {
		err := SignedInAs(tc.login, tc.alsoAccept, tc.identities)
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.refusal)
		}
	}
}

// TestCheckAlsoAccept: the names an authorization declares are trimmed;
// too many, an empty one or one with a control character is refused in
// words.
func TestCheckAlsoAccept(t *testing.T) {
	t.Parallel()
	if got, err := CheckAlsoAccept([]string{" ann@contoso.onmicrosoft.com "}); err != nil || got[0] != "ann@contoso.onmicrosoft.com" {
		t.Errorf("one name: %q %v", got, err)
	}
	for _, bad := range [][]string{make([]string, MaxAlsoAccept+1), {""}, {"ann\n@x"}} {
		if _, err := CheckAlsoAccept(bad); err == nil || !strings.HasPrefix(err.Error(), "also_accept must") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
