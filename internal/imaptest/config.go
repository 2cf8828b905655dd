package imaptest

import (
	"bytes"
	"os"
	"path/filepath"
	"text/template"
)

// configTemplate is a Dovecot 2.3 configuration (Debian bookworm ships
// 2.3.19; 2.4 renamed many of these settings). It is complete in itself:
// nothing of /etc/dovecot is read.
var configTemplate = template.Must(template.New("dovecot.conf").Parse(`# Written by internal/imaptest for one test run.
base_dir = {{.Dir}}/run
state_dir = {{.Dir}}/state
instance_name = {{.Name}}
protocols = imap{{if .SievePort}} sieve{{end}}
listen = 127.0.0.1
log_path = {{.Dir}}/dovecot.log
# Tells our greeting from another server's that took the port first.
login_greeting = Dovecot ready ({{.Name}}).
auth_verbose = yes

default_internal_user = {{.Acct.InternalUser}}
default_internal_group = {{.Acct.InternalGroup}}
default_login_user = {{.Acct.LoginUser}}
first_valid_uid = {{.Acct.MailUID}}
last_valid_uid = {{.Acct.MailUID}}
first_valid_gid = {{.Acct.MailGID}}
last_valid_gid = {{.Acct.MailGID}}

# Plain LOGIN and AUTHENTICATE PLAIN without TLS: it is all loopback.
disable_plaintext_auth = no
auth_mechanisms = plain login
{{- if .AuthPenalty}}
# As shipped: a failed login is answered after 2 s, and an address that
# keeps failing is delayed more (anvil's auth penalty), good logins too.
auth_failure_delay = 2 secs
{{- else}}
# Failed logins are answered within 0.5 s, not after 2 s.
auth_failure_delay = 0
{{- end}}
ssl = yes
ssl_cert = <{{.Dir}}/cert.pem
ssl_key = <{{.Dir}}/key.pem

{{- if .MasterUsers}}
# Master users log in as any user: "user*master" with LOGIN, or PLAIN
# with the user as authorization identity. pass = yes: the user must
# exist in the passdb below.
auth_master_user_separator = *
passdb {
  driver = passwd-file
  master = yes
  pass = yes
  args = scheme=PLAIN {{.Dir}}/masters
}
{{- end}}

# One passwd-file per user: adding a user never rewrites a file that the
# auth process has read, and a user added while the server runs can log
# in at once.
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {{.Dir}}/users/%u
}
userdb {
  driver = passwd-file
  args = username_format=%u {{.Dir}}/users/%u
}

mail_location = {{.MailLocation}}
# Test data need not survive a crash of the machine.
mail_fsync = never
mail_max_userip_connections = 100

namespace inbox {
  inbox = yes
  separator = {{.Separator}}
  prefix = {{.Prefix}}
{{- range .SpecialUse}}
  mailbox "{{.Name}}" {
    auto = create
    special_use = {{.Role}}
  }
{{- end}}
}

{{- if .Capability}}

imap_capability = {{.Capability}}
{{- end}}
{{- if or .QuotaBytes .MaxMailSize}}

# A storage quota per user (RFC 9208): an APPEND beyond it fails with
# NO [OVERQUOTA]; a message over quota_max_mail_size with NO [LIMIT].
mail_plugins = $mail_plugins quota
protocol imap {
  mail_plugins = $mail_plugins imap_quota
}
plugin {
  quota = count:User quota
  quota_vsizes = yes
  quota_rule = *:storage={{.QuotaBytes}}b
{{- if .MaxMailSize}}
  quota_max_mail_size = {{.MaxMailSize}}b
{{- end}}
}
{{- end}}

{{- if .SievePort}}

# ManageSieve (RFC 5804, Pigeonhole): each user's scripts live in ~/sieve,
# the active one linked from ~/.dovecot.sieve.
service managesieve-login {
  chroot =
  inet_listener sieve {
    address = 127.0.0.1
    port = {{.SievePort}}
  }
}
plugin {
  sieve = file:~/sieve;active=~/.dovecot.sieve
{{- if .SieveExtensions}}
  sieve_extensions = {{.SieveExtensions}}
{{- end}}
}
{{- end}}

# The default 256 MB of address space is too little for Dovecot to index a
# maildir of a million messages (WriteInbox): its imap process dies with
# "Out of memory".
service imap {
  vsz_limit = 2G
}

# chroot needs root; it buys a test nothing.
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = {{.Port}}
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = {{.TLSPort}}
    ssl = yes
  }
}
service anvil {
  chroot =
{{- if not .AuthPenalty}}
  # No growing delay after failed logins from 127.0.0.1 (anvil's "auth
  # penalty": 2, 4, 8, then 15 s): tests fail logins on purpose. Dovecot
  # still answers a failure after up to 0.5 s.
  unix_listener anvil-auth-penalty {
    mode = 0
  }
{{- end}}
}
`))

type configData struct {
	Dir, Name     string
	Port, TLSPort int
	Acct          struct {
		InternalUser, InternalGroup, LoginUser string
		MailUID, MailGID                       int
	}
	MailLocation, Separator, Prefix string
	SpecialUse                      []specialUse
	QuotaBytes, MaxMailSize         int64
	Capability                      string
	MasterUsers                     bool
	SievePort                       int
	SieveExtensions                 string
	AuthPenalty                     bool
}

// writeConfig writes the configuration for the given ports and returns its
// path.
func (d *Dovecot) writeConfig(port, tlsPort, sievePort int) (string, error) {
	data := configData{
		Dir: d.Dir, Name: filepath.Base(d.Dir), Port: port, TLSPort: tlsPort,
		MailLocation:    d.mailLocation(),
		Separator:       string(d.Layout.Delimiter()),
		Prefix:          d.Layout.Prefix(),
		SpecialUse:      d.Layout.specialUse(),
		QuotaBytes:      d.quotaBytes,
		MaxMailSize:     d.maxMailSize,
		Capability:      d.capability,
		MasterUsers:     d.masterUsers,
		SievePort:       sievePort,
		SieveExtensions: d.sieveExtensions,
		AuthPenalty:     d.authPenalty,
	}
	data.Acct.InternalUser = d.acct.internalUser
	data.Acct.InternalGroup = d.acct.internalGroup
	data.Acct.LoginUser = d.acct.loginUser
	data.Acct.MailUID, data.Acct.MailGID = d.acct.mailUID, d.acct.mailGID
	var buf bytes.Buffer
	if err := configTemplate.Execute(&buf, data); err != nil {
		return "", err
	}
	path := filepath.Join(d.Dir, "dovecot.conf")
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
}

func (d *Dovecot) mailLocation() string {
	if d.sdbox {
		return sdboxLocation
	}
	return d.Layout.mailLocation()
}
