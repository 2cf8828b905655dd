package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The SMTP settings: a server is optional; when given, its URL, sender
// and password are checked before the service starts, and the password
// never comes from a flag or the URL.
func TestMailServerSettings(t *testing.T) {
	dir := t.TempDir()
	passwordFile := filepath.Join(dir, "smtp-password")
	if err := os.WriteFile(passwordFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  config
		want string // the error, or the server's address when empty
		addr string
	}{
		{"none", config{}, "", ""},
		{"STARTTLS on 587", config{SMTPURL: "smtp://relay@mail.acme.example", SMTPFrom: "mailmigrate@acme.example", SMTPPasswordFile: passwordFile}, "", "mail.acme.example:587"},
		{"TLS on 465", config{SMTPURL: "smtps://mail.acme.example", SMTPFrom: "mailmigrate@acme.example"}, "", "mail.acme.example:465"},
		{"no TLS", config{SMTPURL: "smtp+plain://127.0.0.1:2525", SMTPFrom: "mailmigrate@acme.example"}, "", "127.0.0.1:2525"},
		{"http", config{SMTPURL: "http://mail.acme.example", SMTPFrom: "mailmigrate@acme.example"}, "the scheme must be smtp (STARTTLS), smtps (TLS) or smtp+plain (no TLS)", ""},
		{"password in the URL", config{SMTPURL: "smtp://relay:pw@mail.acme.example", SMTPFrom: "mailmigrate@acme.example"}, "not in the URL", ""},
		{"no sender", config{SMTPURL: "smtp://mail.acme.example"}, "MAILMIGRATE_SMTP_FROM", ""},
		{"password twice", config{SMTPURL: "smtp://relay@mail.acme.example", SMTPFrom: "m@acme.example", SMTPPassword: "x", SMTPPasswordFile: passwordFile}, "given twice", ""},
	} {
		server, err := tc.cfg.mailServer()
		switch {
		case tc.want != "":
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.addr == "" && server != nil, tc.addr != "" && (server == nil || server.Address() != tc.addr):
			t.Errorf("%s: server %+v, want %q", tc.name, server, tc.addr)
		case tc.name == "STARTTLS on 587" && server.Password != "s3cret":
			t.Errorf("%s: the password from the file is %q", tc.name, server.Password)
		}
	}
}
