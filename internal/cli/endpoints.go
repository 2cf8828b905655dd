package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

func endpointCommands() []command {
	return []command{
		{"list", "", "List the IMAP servers", endpointsList},
		{"get", "ID", "Show one IMAP server", endpointsGet},
		{"create", "", "Register an IMAP server; prints its id", endpointsCreate},
		{"update", "ID", "Change the given fields of an IMAP server", endpointsUpdate},
		{"delete", "ID", "Delete an IMAP server that no task uses", endpointsDelete},
		{"check", "ID", "Connect to an IMAP server without logging in; exit 1 and say what to do if it fails", endpointsCheck},
	}
}

func endpointsCheck(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.CheckEndpointWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	c := *resp.JSON200
	err = s.printOutput(c, func() error {
		fields := [][2]string{{"Address", c.Address}}
		if c.Ok {
			fields = append(fields, [2]string{"Works", fmt.Sprintf("yes, in %d ms", c.TookMs)})
		} else {
			fields = append(fields, [2]string{"Problem", c.Problem}, [2]string{"Advice", c.Advice})
		}
		if t := c.Tls; t != nil {
			fields = append(fields, [2]string{"TLS", fmt.Sprintf("%s, %s issued by %s, until %s, %s", t.Version, t.Subject, t.Issuer,
				t.NotAfter.Format(time.DateOnly), map[bool]string{true: "trusted", false: "not trusted"}[t.Verified])})
		}
		fields = append(fields, [2]string{"Greeting", orDash(c.Greeting)}, [2]string{"Capabilities", orDash(strings.Join(c.Capabilities, " "))})
		for _, note := range c.Notes {
			fields = append(fields, [2]string{"Note", note})
		}
		return s.printFields(fields)
	})
	if err == nil && !c.Ok {
		return &unfinishedError{reason: fmt.Sprintf("endpoint %d does not work as configured", id)}
	}
	return err
}

func endpointsList(ctx context.Context, s *session, args []string) error {
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.ListEndpointsWithResponse(ctx)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	return s.printOutput(*resp.JSON200, func() error { return printEndpoints(s, *resp.JSON200) })
}

func printEndpoints(s *session, endpoints []api.Endpoint) error {
	rows := make([][]string, 0, len(endpoints))
	for _, e := range endpoints {
		rows = append(rows, []string{itoa(e.Id), orDash(e.RoleLabel), e.Host, strconv.Itoa(e.Port), string(e.TlsMode), skipVerifyText(e.TlsSkipVerify), authText(e.Auth)})
	}
	return s.printTable([]string{"ID", "ROLE", "HOST", "PORT", "TLS", "CERTIFICATE", "LOGIN"}, rows)
}

// mergeOAuth2 keeps current's settings for the OAuth 2.0 flags not given;
// a provider given refills the token endpoint and scope.
func mergeOAuth2(fs *flag.FlagSet, given api.OAuth2Input, current api.OAuth2Settings) api.OAuth2Input {
	merged := api.OAuth2Input{Grant: current.Grant, ClientId: current.ClientId, TokenUrl: current.TokenUrl, DeviceUrl: current.DeviceUrl,
		AuthorizationUrl: current.AuthorizationUrl, Scope: current.Scope, Mechanism: current.Mechanism}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "oauth2-provider":
			merged.Provider, merged.TokenUrl, merged.DeviceUrl, merged.Scope = given.Provider, given.TokenUrl, given.DeviceUrl, given.Scope
			merged.AuthorizationUrl = given.AuthorizationUrl
		case "oauth2-device-url":
			merged.DeviceUrl = given.DeviceUrl
		case "oauth2-authorization-url":
			merged.AuthorizationUrl = given.AuthorizationUrl
		case "oauth2-tenant":
			merged.Tenant = given.Tenant
		case "oauth2-grant":
			merged.Grant = given.Grant
		case "oauth2-client-id":
			merged.ClientId = given.ClientId
		case "oauth2-token-url":
			merged.TokenUrl = given.TokenUrl
		case "oauth2-scope":
			merged.Scope = given.Scope
		case "oauth2-mechanism":
			merged.Mechanism = given.Mechanism
		}
	})
	return merged
}

// authText says how the accounts log in to an endpoint.
func authText(a api.EndpointAuth) string {
	if a.Method == api.AuthMethodOauth2 && a.Oauth2 != nil {
		switch a.Oauth2.Grant {
		case api.OAuth2GrantClientCredentials:
			return fmt.Sprintf("OAuth 2.0, application %s's own token", a.Oauth2.ClientId)
		case api.OAuth2GrantServiceAccount:
			return fmt.Sprintf("OAuth 2.0, service account %s acting for each account", a.Oauth2.ClientId)
		}
		return fmt.Sprintf("OAuth 2.0, each account's refresh token for application %s", a.Oauth2.ClientId)
	}
	if a.Method != api.AuthMethodMaster {
		return "each account's password"
	}
	if a.MasterForm == api.MasterFormSeparator {
		return fmt.Sprintf("master %s (LOGIN account*%s)", a.MasterLogin, a.MasterLogin)
	}
	return fmt.Sprintf("master %s (SASL PLAIN for the account)", a.MasterLogin)
}

func skipVerifyText(skip bool) string {
	if skip {
		return "not verified (unsafe)"
	}
	return "verified"
}

func endpointsGet(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	e, err := getEndpoint(ctx, s, id)
	if err != nil {
		return err
	}
	return s.printOutput(e, func() error {
		return s.printFields([][2]string{
			{"ID", itoa(e.Id)}, {"Role", orDash(e.RoleLabel)}, {"Host", e.Host}, {"Port", strconv.Itoa(e.Port)},
			{"TLS", string(e.TlsMode)}, {"Certificate", skipVerifyText(e.TlsSkipVerify)}, {"Provider", string(e.Profile)}, {"Limits", limitsText(e.Limits)}, {"Sieve scripts", sieveText(e.Sieve)}, {"Login", authText(e.Auth)},
		})
	})
}

func getEndpoint(ctx context.Context, s *session, id int64) (api.Endpoint, error) {
	resp, err := s.client.GetEndpointWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return api.Endpoint{}, err
	}
	return *resp.JSON200, nil
}

// parseOneID parses the flags and a single positional id.
func (s *session) parseOneID(args []string, name string) (int64, error) {
	pos, err := s.parse(args, 1)
	if err != nil {
		return 0, err
	}
	return s.parseID(name, pos[0])
}

// Variables that may hold the master password and the OAuth 2.0 client
// secret of endpoints create and update, out of ps and the shell's
// history.
const (
	masterPasswordEnv = "MAILMIGRATE_MASTER_PASSWORD"
	clientSecretEnv   = "MAILMIGRATE_CLIENT_SECRET"
)

// endpointFlags binds the fields of an endpoint to flags.
type endpointFlags struct {
	input              api.EndpointInput
	limits             api.EndpointLimits
	sieve              api.EndpointSieve
	auth               api.EndpointAuthInput
	oauth2             api.OAuth2Input
	masterPasswordFile string
	clientSecretFile   string
}

func (ef *endpointFlags) bind(fs *flag.FlagSet) {
	in := &ef.input
	fs.StringVar(&in.Host, "host", in.Host, "host name or IP address")
	fs.IntVar(&in.Port, "port", in.Port, "TCP port; 0 means 993 for ssl, 143 otherwise")
	fs.Func("tls-mode", "ssl, starttls or plain (default ssl)", func(v string) error {
		in.TlsMode = api.TLSMode(v)
		return nil
	})
	fs.StringVar(&in.RoleLabel, "role-label", in.RoleLabel, "free text naming the server's role, e.g. \"old provider\"")
	fs.BoolVar(&in.TlsSkipVerify, "tls-skip-verify", in.TlsSkipVerify, "accept any certificate (self-signed servers); unsafe")
	fs.Func("profile", "the provider, for the limits it does not announce: auto (told from the server, the default), generic, gmail, microsoft365 or exchange", func(v string) error {
		in.Profile = api.Profile(v)
		return nil
	})
	l := &ef.limits
	fs.Int64Var(&l.MaxMessageBytes, "max-message-bytes", 0, "as a destination, the largest message the server takes; 0: the provider's")
	fs.Int64Var(&l.DailyDownloadBytes, "daily-download-bytes", 0, "what one mailbox may read over 24 hours (Gmail: 2500000000); 0: the provider's")
	fs.Int64Var(&l.DailyUploadBytes, "daily-upload-bytes", 0, "what one mailbox may write over 24 hours (Gmail: 500000000); 0: the provider's")
	fs.IntVar(&l.Connections, "max-connections", 0, "connections to the host at once, every account together; 0: the provider's (none)")
	fs.IntVar(&l.AccountConnections, "max-account-connections", 0, "connections to one mailbox at once (Gmail 15, Microsoft 365 20, Exchange 16); 0: the provider's")
	fs.IntVar(&ef.sieve.Port, "sieve-port", 0, "the server's ManageSieve port (usually 4190): when both endpoints of a task have one, the accounts' Sieve scripts move after their messages; 0: none")
	fs.Func("sieve-tls-mode", "ManageSieve's own security: starttls (the default), ssl or plain", func(v string) error {
		ef.sieve.TlsMode = api.TLSMode(v)
		return nil
	})
	fs.Func("auth", "how accounts log in: password (each its own, the default), master (one administrator for all) or oauth2 (tokens)", func(v string) error {
		ef.auth.Method = api.AuthMethod(v)
		return nil
	})
	fs.StringVar(&ef.auth.MasterLogin, "master-login", "", "the administrator's login, with --auth master")
	fs.Func("master-form", "authzid (SASL PLAIN for the account, the default) or separator (LOGIN account*master, Dovecot)", func(v string) error {
		ef.auth.MasterForm = api.MasterForm(v)
		return nil
	})
	fs.StringVar(&ef.masterPasswordFile, "master-password-file", "",
		"file holding the administrator's password, - for stdin; default: the variable "+masterPasswordEnv)
	o := &ef.oauth2
	fs.Func("oauth2-provider", "microsoft365 or google: fills in the token endpoint and scope", func(v string) error {
		o.Provider = api.OAuth2Provider(v)
		return nil
	})
	fs.StringVar(&o.Tenant, "oauth2-tenant", "", "Microsoft 365's tenant id or domain")
	fs.Func("oauth2-grant", "refresh_token (each account's, the default), client_credentials (the application's own token) or service_account (a Google service account with domain-wide delegation; its JSON key file as the client secret)", func(v string) error {
		o.Grant = api.OAuth2Grant(v)
		return nil
	})
	fs.StringVar(&o.ClientId, "oauth2-client-id", "", "the application (client) id")
	fs.StringVar(&ef.clientSecretFile, "oauth2-client-secret-file", "",
		"file holding the client secret, - for stdin; default: the variable "+clientSecretEnv)
	fs.StringVar(&o.TokenUrl, "oauth2-token-url", "", "the token endpoint, unless a provider gives it")
	fs.StringVar(&o.DeviceUrl, "oauth2-device-url", "", "the device authorization endpoint, for accounts authorize (microsoft365 gives it)")
	fs.StringVar(&o.AuthorizationUrl, "oauth2-authorization-url", "", "the authorization endpoint, for accounts authorize in a browser (google and microsoft365 give it)")
	fs.StringVar(&o.Scope, "oauth2-scope", "", "space-separated scopes, unless a provider gives them")
	fs.Func("oauth2-mechanism", "xoauth2 (the default) or oauthbearer", func(v string) error {
		o.Mechanism = api.TokenMechanism(v)
		return nil
	})
}

// authGiven reports whether a flag of the authentication was given.
func authGiven(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		given = given || f.Name == "auth" || strings.HasPrefix(f.Name, "master-") || strings.HasPrefix(f.Name, "oauth2-")
	})
	return given
}

func endpointsCreate(ctx context.Context, s *session, args []string) error {
	ef := endpointFlags{input: api.EndpointInput{TlsMode: api.TLSModeSsl}}
	ef.bind(s.flags)
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	if authGiven(s.flags) {
		if err := ef.readAuth(s, ""); err != nil {
			return err
		}
	}
	ef.input.Limits = &ef.limits
	ef.input.Sieve = &ef.sieve
	resp, err := s.client.CreateEndpointWithResponse(ctx, ef.input)
	if err := expect(resp, err, http.StatusCreated); err != nil {
		return err
	}
	return s.printCreated(resp.JSON201.Id)
}

// readAuth puts the authentication flags in the request and reads the
// master password. Without --auth the method is master when a master
// flag is given, else current's.
func (ef *endpointFlags) readAuth(s *session, current api.AuthMethod) error {
	auth := ef.auth
	if auth.Method == "" {
		auth.Method = current
		s.flags.Visit(func(f *flag.Flag) {
			switch {
			case strings.HasPrefix(f.Name, "master-"):
				auth.Method = api.AuthMethodMaster
			case strings.HasPrefix(f.Name, "oauth2-"):
				auth.Method = api.AuthMethodOauth2
			}
		})
	}
	if ef.masterPasswordFile == "-" && ef.clientSecretFile == "-" {
		return s.usageErrorf("only one secret can come from stdin")
	}
	var err error
	switch auth.Method {
	case api.AuthMethodMaster:
		auth.MasterPassword, err = s.readSecret(ef.masterPasswordFile, masterPasswordEnv)
	case api.AuthMethodOauth2:
		oauth2 := ef.oauth2
		oauth2.ClientSecret, err = s.readSecret(ef.clientSecretFile, clientSecretEnv)
		auth.Oauth2 = &oauth2
	}
	ef.input.Auth = &auth
	return err
}

// endpointsUpdate changes only the fields given as flags: it reads the
// record and puts it back whole, because PUT replaces every field. The
// authentication is sent only when one of its flags is given; a master
// password not given is kept by the service.
func endpointsUpdate(ctx context.Context, s *session, args []string) error {
	var ef endpointFlags
	ef.bind(s.flags)
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	current, err := getEndpoint(ctx, s, id)
	if err != nil {
		return err
	}
	in := ef.input
	limits, sieve := current.Limits, current.Sieve
	merged := api.EndpointInput{Host: current.Host, Port: current.Port, RoleLabel: current.RoleLabel, TlsMode: current.TlsMode, TlsSkipVerify: current.TlsSkipVerify,
		Profile: current.Profile, Limits: &limits, Sieve: &sieve}
	s.flags.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "host":
			merged.Host = in.Host
		case "port":
			merged.Port = in.Port
		case "tls-mode":
			merged.TlsMode = in.TlsMode
		case "role-label":
			merged.RoleLabel = in.RoleLabel
		case "tls-skip-verify":
			merged.TlsSkipVerify = in.TlsSkipVerify
		case "profile":
			merged.Profile = in.Profile
		case "max-message-bytes":
			limits.MaxMessageBytes = ef.limits.MaxMessageBytes
		case "daily-download-bytes":
			limits.DailyDownloadBytes = ef.limits.DailyDownloadBytes
		case "daily-upload-bytes":
			limits.DailyUploadBytes = ef.limits.DailyUploadBytes
		case "max-connections":
			limits.Connections = ef.limits.Connections
		case "max-account-connections":
			limits.AccountConnections = ef.limits.AccountConnections
		case "sieve-port":
			sieve.Port = ef.sieve.Port
		case "sieve-tls-mode":
			sieve.TlsMode = ef.sieve.TlsMode
		}
	})
	if authGiven(s.flags) {
		if ef.auth.MasterLogin == "" {
			ef.auth.MasterLogin = current.Auth.MasterLogin
		}
		if ef.auth.MasterForm == "" {
			ef.auth.MasterForm = current.Auth.MasterForm
		}
		if c := current.Auth.Oauth2; c != nil {
			ef.oauth2 = mergeOAuth2(s.flags, ef.oauth2, *c)
		}
		if err := ef.readAuth(s, current.Auth.Method); err != nil {
			return err
		}
		merged.Auth = ef.input.Auth
	}
	resp, err := s.client.UpdateEndpointWithResponse(ctx, id, merged)
	return expect(resp, err, http.StatusNoContent)
}

func endpointsDelete(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.DeleteEndpointWithResponse(ctx, id)
	return expect(resp, err, http.StatusNoContent)
}

// limitsText lists an endpoint's own limits; the others are its provider's.
func limitsText(l api.EndpointLimits) string {
	var parts []string
	for _, f := range []struct {
		name  string
		value int64
	}{{"largest message", l.MaxMessageBytes}, {"daily download", l.DailyDownloadBytes}, {"daily upload", l.DailyUploadBytes},
		{"connections", int64(l.Connections)}, {"per mailbox", int64(l.AccountConnections)}} {
		if f.value > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f.name, f.value))
		}
	}
	if len(parts) == 0 {
		return "the provider's"
	}
	return strings.Join(parts, ", ") + "; otherwise the provider's"
}

// sieveText says where the endpoint's Sieve scripts are managed.
func sieveText(s api.EndpointSieve) string {
	if s.Port == 0 {
		return "no ManageSieve: scripts do not move"
	}
	return fmt.Sprintf("ManageSieve on port %d, %s", s.Port, s.TlsMode)
}
