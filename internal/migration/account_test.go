package migration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// account is an AccountInput literal in the order of its fields; the
// destination password "=" links it to the source's.
func account(sourceLogin, sourcePassword, destinationLogin, destinationPassword string) AccountInput {
	if destinationPassword == "=" {
		return AccountInput{SourceLogin: sourceLogin, SourcePassword: Password(sourcePassword), DestinationLogin: destinationLogin,
			DestinationPasswordSameAsSource: true}
	}
	return AccountInput{SourceLogin: sourceLogin, SourcePassword: Password(sourcePassword), DestinationLogin: destinationLogin,
		DestinationPassword: Password(destinationPassword)}
}

// accountText shows an AccountInput with its passwords, for test failures.
func accountText(in AccountInput) string {
	return fmt.Sprintf("{%q %q %q %q linked %v}", in.SourceLogin, string(in.SourcePassword), in.DestinationLogin, string(in.DestinationPassword),
		in.DestinationPasswordSameAsSource)
}

func TestAccountInputNormalizeNew(t *testing.T) {
	t.Parallel()
	const (
		badLogin    = " must be UTF-8 without control characters, at most 1024 bytes"
		badPassword = " must be at most 1024 bytes, without NUL, CR or LF"
	)
	maxLogin := strings.Repeat("é", MaxLoginBytes/2) // 2 bytes each
	maxPassword := strings.Repeat("p", MaxPasswordBytes)
	for _, tc := range []struct {
		name    string
		in      AccountInput
		want    AccountInput
		wantErr string
	}{
		{"destination defaults to the source, linked", account("alice", "pw", "", ""), account("alice", "pw", "alice", "="), ""},
		{"logins trimmed, passwords kept", account(" alice\t", " pw ", "\nbob ", "\tpw2\t"), account("alice", " pw ", "bob", "\tpw2\t"), ""},
		{"blank destination login defaults", account("alice", "pw", "   ", ""), account("alice", "pw", "alice", "="), ""},
		{"destination password alone", account("alice", "pw", "", "pw2"), account("alice", "pw", "alice", "pw2"), ""},
		{"longest login and password", account(maxLogin, maxPassword, "", ""), account(maxLogin, maxPassword, maxLogin, "="), ""},
		{"longest login once trimmed", account("  "+maxLogin+"  ", "pw", "", ""), account(maxLogin, "pw", maxLogin, "="), ""},
		{"password of spaces", account("alice", "   ", "", ""), account("alice", "   ", "alice", "="), ""},
		{"password with quotes and UTF-8", account("alice", `p"w\ü`, "", ""), account("alice", `p"w\ü`, "alice", "="), ""},
		{"no source password", account("alice", "", "bob", "pw2"), AccountInput{}, "source_password must not be empty"},
		{"source password checked first", account("", "", "", ""), AccountInput{}, "source_password must not be empty"},
		{"no source login", account("", "pw", "bob", ""), AccountInput{}, "source_login must not be empty"},
		{"blank source login", account(" \t ", "pw", "", ""), AccountInput{}, "source_login must not be empty"},
		{"source login too long", account(maxLogin+"x", "pw", "", ""), AccountInput{}, "source_login" + badLogin},
		{"destination login too long", account("alice", "pw", maxLogin+"x", ""), AccountInput{}, "destination_login" + badLogin},
		{"source login not UTF-8", account("al\xffice", "pw", "", ""), AccountInput{}, "source_login" + badLogin},
		{"NUL in the source login", account("al\x00ice", "pw", "", ""), AccountInput{}, "source_login" + badLogin},
		{"CR in the source login", account("al\rice", "pw", "", ""), AccountInput{}, "source_login" + badLogin},
		{"tab in the destination login", account("alice", "pw", "b\tob", ""), AccountInput{}, "destination_login" + badLogin},
		{"DEL in the destination login", account("alice", "pw", "bob\x7f", ""), AccountInput{}, "destination_login" + badLogin},
		{"source password too long", account("alice", maxPassword+"p", "", ""), AccountInput{}, "source_password" + badPassword},
		{"NUL in the source password", account("alice", "p\x00w", "", ""), AccountInput{}, "source_password" + badPassword},
		{"CR in the source password", account("alice", "p\rw", "", ""), AccountInput{}, "source_password" + badPassword},
		{"LF in the source password", account("alice", "pw\n", "", ""), AccountInput{}, "source_password" + badPassword},
		{"LF in the destination password", account("alice", "pw", "", "p\nw"), AccountInput{}, "destination_password" + badPassword},
		{"destination password too long", account("alice", "pw", "", maxPassword+"p"), AccountInput{}, "destination_password" + badPassword},
		{"logins checked before passwords", account("a\x01", "p\x00", "", ""), AccountInput{}, "source_login" + badLogin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			err := in.normalizeNew(EveryPassword)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if _, ok := err.(*InvalidError); !ok {
					t.Errorf("error is %T, want *InvalidError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in != tc.want {
				t.Errorf("got %s, want %s", accountText(in), accountText(tc.want))
			}
		})
	}
}

// TestAccountInputNormalize covers an update: empty passwords keep the
// stored ones, so they stay empty here.
func TestAccountInputNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      AccountInput
		want    AccountInput
		wantErr string
	}{
		{"logins only", account(" alice ", "", "", ""), account("alice", "", "alice", ""), ""},
		{"source password only", account("alice", "pw", "bob", ""), account("alice", "pw", "bob", ""), ""},
		{"destination password only", account("alice", "", "", "pw2"), account("alice", "", "alice", "pw2"), ""},
		{"link the destination password again", account("alice", "", "", "="), account("alice", "", "alice", "="), ""},
		{"a link and a destination password", AccountInput{SourceLogin: "alice", DestinationPassword: "pw2", DestinationPasswordSameAsSource: true}, AccountInput{},
			"destination_password must be empty when destination_password_same_as_source is true"},
		{"no source login", account("", "pw", "bob", ""), AccountInput{}, "source_login must not be empty"},
		{"control character in the destination login", account("alice", "", "b\x1bob", ""), AccountInput{},
			"destination_login must be UTF-8 without control characters, at most 1024 bytes"},
		{"CR in the destination password", account("alice", "", "", "p\r"), AccountInput{},
			"destination_password must be at most 1024 bytes, without NUL, CR or LF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			err := in.normalize(EveryPassword)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in != tc.want {
				t.Errorf("got %s, want %s", accountText(in), accountText(tc.want))
			}
		})
	}
}

// TestAccountPasswordsUnderAMasterLogin: a side whose endpoint has a
// master login needs no account password; the other side still does.
func TestAccountPasswordsUnderAMasterLogin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		needs   SecretNeeds
		in      AccountInput
		want    AccountInput
		wantErr string
	}{
		{"master on both sides: logins alone", SecretNeeds{}, account("alice", "", "", ""), account("alice", "", "alice", "="), ""},
		{"master source, destination password given", SecretNeeds{Destination: SecretPassword}, account("alice", "", "", "pw2"), account("alice", "", "alice", "pw2"), ""},
		{"master source, no destination password", SecretNeeds{Destination: SecretPassword}, account("alice", "", "", ""), AccountInput{},
			"destination_password must not be empty: the source logs in without one, so there is none to share"},
		{"master destination, source password linked", SecretNeeds{Source: SecretPassword}, account("alice", "pw", "", ""), account("alice", "pw", "alice", "="), ""},
		{"master destination, source password still needed", SecretNeeds{Source: SecretPassword}, account("alice", "", "", ""), AccountInput{}, "source_password must not be empty"},
		{"a user's refresh token is not shared", SecretNeeds{SecretRefreshToken, SecretRefreshToken}, account("alice", "rt", "", ""),
			AccountInput{SourceLogin: "alice", SourcePassword: "rt", DestinationLogin: "alice"}, ""},
		{"a refresh token is not linked, even when asked", SecretNeeds{SecretRefreshToken, SecretRefreshToken},
			AccountInput{SourceLogin: "alice", SourcePassword: "rt", DestinationPasswordSameAsSource: true},
			AccountInput{SourceLogin: "alice", SourcePassword: "rt", DestinationLogin: "alice"}, ""},
		{"a refresh token may come later", SecretNeeds{SecretRefreshToken, NoSecret}, account("alice", "", "", ""), account("alice", "", "alice", "="), ""},
		{"a refresh token cannot stand for a password", SecretNeeds{SecretRefreshToken, SecretPassword}, account("alice", "rt", "", ""), AccountInput{},
			"destination_password must not be empty: the source's refresh token cannot stand for it"},
		{"a long refresh token", SecretNeeds{SecretRefreshToken, NoSecret}, account("alice", strings.Repeat("t", 8000), "", ""), account("alice", strings.Repeat("t", 8000), "alice", "="), ""},
		{"a password as long is not", EveryPassword, account("alice", strings.Repeat("t", 8000), "", ""), AccountInput{}, "source_password must be at most 1024 bytes, without NUL, CR or LF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			err := in.normalizeNew(tc.needs)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in != tc.want {
				t.Errorf("got %s, want %s", accountText(in), accountText(tc.want))
			}
		})
	}
}

const secret = "hunter2-Geheimnis"

// holders puts a password in every kind of value it may travel in.
func holders() map[string]any {
	in := account("alice", secret, "bob", secret+"-2")
	return map[string]any{
		"Password":      Password(secret),
		"*Password":     new(Password(secret)),
		"AccountInput":  in,
		"*AccountInput": &in,
		"Credentials":   Credentials{"alice", Password(secret), "bob", Password(secret)},
		"ImportRow":     ImportRow{Line: 3, Account: in},
		"ImportFile":    ParseAccountsCSV([]byte("alice,"+secret+"\n"), EveryPassword),
		"[]Password":    []Password{secret, secret},
		"Endpoint":      Endpoint{Host: "h", Auth: EndpointAuth{Method: AuthMaster, MasterLogin: "admin", MasterPassword: secret}},
		"map":           map[string]Password{"pw": secret},
		// Not a pointer field: fmt prints a nested pointer to a struct
		// raw under a verb that does not fit a pointer, such as %s, and no
		// method of Password can stop that.
		"nested": struct {
			Name string
			In   AccountInput
			Any  any
		}{"n", in, Password(secret)},
	}
}

func TestPasswordNotInFmt(t *testing.T) {
	t.Parallel()
	for name, v := range holders() {
		for _, verb := range []string{"%v", "%s", "%q", "%+v", "%#v", "%x", "%X", "%10s", "%-8v", "%.3s"} {
			got := fmt.Sprintf(verb, v)
			if strings.Contains(got, secret) || strings.Contains(got, fmt.Sprintf("%x", secret)) ||
				strings.Contains(got, fmt.Sprintf("%X", secret)) {
				t.Errorf("%s of %s shows the password: %s", verb, name, got)
			}
		}
	}
	for verb, want := range map[string]string{"%v": "REDACTED", "%s": "REDACTED", "%q": `"REDACTED"`, "%+v": "REDACTED", "%#v": `"REDACTED"`} {
		if got := fmt.Sprintf(verb, Password(secret)); got != want {
			t.Errorf("%s: %s, want %s", verb, got, want)
		}
	}
	if got := fmt.Sprint(Password(secret)); got != "REDACTED" {
		t.Errorf("Sprint: %s", got)
	}
	if got := fmt.Errorf("login as %s failed", Password(secret)).Error(); strings.Contains(got, secret) {
		t.Errorf("Errorf: %s", got)
	}
}

// TestPasswordNotInWrongVerb: fmt prints the operand of a wrong verb raw,
// e.g. "%!d(migration.Password=hunter2)", unless the type is a
// fmt.Formatter. go vet catches a wrong verb in a direct call, not through
// every wrapper, and Password promises that no format verb shows it.
func TestPasswordNotInWrongVerb(t *testing.T) {
	t.Parallel()
	for name, v := range holders() {
		// The verbs are variables so that vet lets this compile.
		var leaks []string
		for _, verb := range []string{"%d", "%t", "%c", "%e", "%b", "%o", "%U", "%08d"} {
			if got := fmt.Sprintf(verb, v); strings.Contains(got, secret) {
				leaks = append(leaks, verb)
			}
		}
		if len(leaks) > 0 {
			t.Errorf("%v of %s show the password, e.g. %s", leaks, name, fmt.Sprintf(leaks[0], v))
		}
	}
}

func TestPasswordNotInSlog(t *testing.T) {
	t.Parallel()
	for _, handler := range []string{"text", "json"} {
		var buf bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(&buf, nil)
		if handler == "json" {
			h = slog.NewJSONHandler(&buf, nil)
		}
		log := slog.New(h).With("pw", Password(secret))
		for name, v := range holders() {
			log.Info("account", name, v)
			log.Info("grouped", slog.Group("g", "value", v))
			log.LogAttrs(t.Context(), slog.LevelWarn, "attrs", slog.Any(name, v))
		}
		log.Info("args", "pw", Password(secret), "ptr", new(Password(secret)))
		out := buf.String()
		if strings.Contains(out, secret) {
			t.Errorf("%s handler shows the password:\n%s", handler, out)
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("%s handler shows no REDACTED:\n%s", handler, out)
		}
	}
}

func TestPasswordNotInJSON(t *testing.T) {
	t.Parallel()
	for name, v := range holders() {
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(string(out), secret) || !strings.Contains(string(out), `"REDACTED"`) {
			t.Errorf("%s: %s", name, out)
		}
	}
	out, err := json.Marshal(struct {
		Login    string   `json:"login"`
		Password Password `json:"password"`
		Omitted  Password `json:"omitted,omitempty"`
	}{"alice", secret, ""})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"login":"alice","password":"REDACTED"}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

// TestPasswordRevealedOnPurpose: string(p) is the one way to the value.
func TestPasswordRevealedOnPurpose(t *testing.T) {
	t.Parallel()
	if got := string(Password(secret)); got != secret {
		t.Errorf("string(p) = %q", got)
	}
}
