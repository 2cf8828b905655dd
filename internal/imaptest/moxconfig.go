package imaptest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

// moxStaticTemplate is mox's mox.conf (format: github.com/mjl-/sconf,
// indented with tabs), as `mox config describe-static` documents it: one
// listener with plain IMAP only, on loopback. The data directory is
// relative to this file.
var moxStaticTemplate = template.Must(template.New("mox.conf").Parse(`# Written by internal/imaptest for one test run.
DataDir: data
LogLevel: debug
# As whom mox runs; localserve does not change users.
User: {{.UID}}
NoFixPermissions: true
Hostname: localhost
Listeners:
	local:
		IPs:
			- 127.0.0.1
		IMAP:
			Enabled: true
			Port: {{.Port}}
			# LOGIN without TLS: it is all loopback.
			NoRequireSTARTTLS: true
Postmaster:
	Account: {{.Postmaster}}
	Mailbox: Inbox
NoOutgoingDMARCReports: true
NoOutgoingTLSReports: true
`))

// moxDynamicTemplate is mox's domains.conf (`mox config
// describe-domains`): each login is an account of that name with the one
// address it logs in with.
var moxDynamicTemplate = template.Must(template.New("domains.conf").Parse(`# Written by internal/imaptest for one test run.
Domains:
{{- range .Domains}}
	{{.}}: nil
{{- end}}
Accounts:
{{- range .Logins}}
	{{.Address}}:
		Domain: {{.Domain}}
		Destinations:
			{{.Address}}: nil
{{- end}}
`))

type moxLogin struct{ Address, Domain string }

// moxLoginPattern is what a login must look like: mox logs in with an
// email address (of an account's destinations), and sconf takes it
// unquoted.
var moxLoginPattern = regexp.MustCompile(`^[a-z0-9._-]+@([a-z0-9-]+(\.[a-z0-9-]+)*)$`)

// moxMinPassword is the shortest password `mox setaccountpassword` takes.
const moxMinPassword = 8

// checkMoxUsers refuses logins and passwords mox cannot take.
func checkMoxUsers(users map[string]string) error {
	if len(users) == 0 {
		return fmt.Errorf("mox needs at least one user (its postmaster account)")
	}
	for login, password := range users {
		if !moxLoginPattern.MatchString(login) {
			return fmt.Errorf("mox login %q: must be an email address of lower-case letters, digits, '.', '_' or '-'", login)
		}
		if len(password) < moxMinPassword || strings.ContainsAny(password, "\r\n") {
			return fmt.Errorf("mox password of %q: mox takes one line of at least %d characters", login, moxMinPassword)
		}
	}
	return nil
}

// writeMoxConfig writes mox.conf with the IMAP port, and domains.conf
// with an account for every login, into dir, where `mox localserve -dir`
// reads them.
func writeMoxConfig(dir string, port int, logins []string) error {
	var static struct {
		UID, Port  int
		Postmaster string
	}
	static.UID, static.Port, static.Postmaster = os.Getuid(), port, logins[0]
	var dynamic struct {
		Domains []string
		Logins  []moxLogin
	}
	for _, login := range logins {
		domain := login[strings.LastIndexByte(login, '@')+1:]
		dynamic.Logins = append(dynamic.Logins, moxLogin{Address: login, Domain: domain})
		if !slices.Contains(dynamic.Domains, domain) {
			dynamic.Domains = append(dynamic.Domains, domain)
		}
	}
	if err := writeTemplate(filepath.Join(dir, "mox.conf"), moxStaticTemplate, static); err != nil {
		return err
	}
	return writeTemplate(filepath.Join(dir, "domains.conf"), moxDynamicTemplate, dynamic)
}

func writeTemplate(path string, tmpl *template.Template, data any) error {
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// setMoxPassword sets the password of login's account with `mox
// setaccountpassword`, which reads it from stdin and hands it to the
// running mox over its control socket. (mox keeps passwords, as bcrypt
// and SCRAM secrets, in the account's database, not in its config.)
func (m *Mox) setMoxPassword(login, password string) error {
	cmd := exec.Command(m.bin, "-config", filepath.Join(m.Dir, "mox.conf"), "setaccountpassword", login)
	cmd.Stdin = strings.NewReader(password + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // stdout has only the prompt
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mox setaccountpassword %s: %v: %s", login, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}
