package comparison

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// mbsyncTool is mbsync (Debian's isync), one process per account.
type mbsyncTool struct{ bin string }

func (mbsyncTool) name() string { return "mbsync" }

// mbsyncConfig is the configuration of one account's copy: the source is
// the far side, the destination the near side, and "Sync Pull" propagates
// far to near only, so that the source is never written. CopyArrivalDate
// keeps INTERNALDATE, which mbsync drops by default. The destination's
// NAMESPACE prefix ("INBOX.") and both delimiters are taken from the
// servers. The sync state of both passes lives in StateDir.
var mbsyncConfig = template.Must(template.New("mbsyncrc").Parse(`IMAPAccount source
Host {{.Src.Host}}
Port {{.Src.Port}}
User {{.Src.Login}}
Pass {{.Src.Password}}
SSLType None
AuthMechs LOGIN

IMAPStore source
Account source

IMAPAccount destination
Host {{.Dst.Host}}
Port {{.Dst.Port}}
User {{.Dst.Login}}
Pass {{.Dst.Password}}
SSLType None
AuthMechs LOGIN

IMAPStore destination
Account destination

Channel migrate
Far :source:
Near :destination:
Patterns {{.Patterns}}
Create Near
Sync Pull
CopyArrivalDate yes
SyncState {{.StateDir}}/
`))

type mbsyncData struct {
	Src, Dst endpoint
	Patterns string
	StateDir string
}

func (t mbsyncTool) migrate(ctx context.Context, r *run) (usage, error) {
	var cmds []*exec.Cmd
	for _, a := range r.src.accounts {
		path, err := writeMbsyncConfig(r, a)
		if err != nil {
			return usage{}, err
		}
		cmds = append(cmds, exec.CommandContext(ctx, t.bin, "-q", "-c", path, "migrate"))
	}
	return runProcesses(ctx, cmds, r.parallel)
}

// writeMbsyncConfig writes account a's configuration and state directory
// under the run's directory; the second pass finds both as the first
// left them.
func writeMbsyncConfig(r *run, a account) (string, error) {
	dir := filepath.Join(r.dir, "mbsync-"+a.srcLogin)
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return "", err
	}
	data := mbsyncData{
		Src:      endpoint{r.src.dovecot.Host, r.src.dovecot.Port, a.srcLogin, a.srcPassword},
		Dst:      endpoint{r.dst.Host, r.dst.Port, a.dstLogin, a.dstPassword},
		Patterns: mbsyncPatterns(r.src.dovecot.Layout, r.dst.Layout),
		StateDir: state,
	}
	var buf strings.Builder
	if err := mbsyncConfig.Execute(&buf, data); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "mbsyncrc")
	return path, os.WriteFile(path, []byte(buf.String()), 0o600)
}

// mbsyncPatterns selects every mailbox but the destination's special-use
// folders that the source has no mailbox of that name for. mbsync pairs
// mailboxes by name on both sides, so it would look for the destination's
// own "Sent" on the source and fail the channel; an operator excludes
// them like this. (mbsync does not map special-use roles: the source's
// "Sent Items" becomes the destination's "INBOX.Sent Items", next to the
// destination's "INBOX.Sent".)
func mbsyncPatterns(src, dst imaptest.Layout) string {
	patterns := []string{"*"}
	for _, role := range imaptest.Roles {
		name := strings.TrimPrefix(dst.RoleMailbox(role), dst.Prefix())
		if name != "" && name != src.RoleMailbox(role) {
			patterns = append(patterns, mbsyncQuote("!"+name))
		}
	}
	return strings.Join(patterns, " ")
}

// mbsyncQuote quotes a configuration argument that holds blanks.
func mbsyncQuote(arg string) string {
	if strings.ContainsAny(arg, " \t") {
		return `"` + arg + `"`
	}
	return arg
}
