package comparison

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// doveadmTool is Dovecot's dsync pulling over IMAP (imapc) into the
// destination's mail store: `doveadm backup -R` run against the
// destination Dovecot's configuration, one process per account. It does
// not go through the destination's IMAP server: it writes the maildir
// itself, so its own CPU time includes what a server would spend storing
// the mail, and it can only write into a Dovecot it runs next to.
type doveadmTool struct{ bin string }

func (doveadmTool) name() string { return "doveadm" }

func (t doveadmTool) migrate(ctx context.Context, r *run) (usage, error) {
	conf, err := dovecotConfig(r.dst.Dir)
	if err != nil {
		return usage{}, err
	}
	var cmds []*exec.Cmd
	for _, a := range r.src.accounts {
		args := doveadmArgs(conf, endpoint{r.src.dovecot.Host, r.src.dovecot.Port, a.srcLogin, a.srcPassword}, a.dstLogin)
		cmds = append(cmds, exec.CommandContext(ctx, t.bin, args...))
	}
	return runProcesses(ctx, cmds, r.parallel)
}

// doveadmArgs is the invocation that works with Dovecot 2.3.19 for the
// destination layout (Maildir++, namespace prefix "INBOX.", INBOX at the
// maildir's root):
//
//   - -R makes it a pull: the remote location "imapc:" is the source,
//     the user's own mail store the destination, which becomes its mirror.
//   - namespace/inbox/prefix= : with the "INBOX." prefix, the imapc side
//     cannot find its INBOX again by GUID ("Remote lost mailbox GUID"),
//     and backup then tries to recreate the destination's INBOX with the
//     source's UIDVALIDITY, which fails ("INBOX can't be deleted") since
//     a Maildir++ INBOX is the maildir's root. Maildir++ stores
//     "INBOX.Projects" and "Projects" both as ".Projects", so the mail
//     store written is the one the destination's IMAP server reads.
//   - imapc_features and mail_prefetch_count are what Dovecot's migration
//     documentation recommends for speed.
func doveadmArgs(conf string, src endpoint, dstLogin string) []string {
	settings := []string{
		"namespace/inbox/prefix=",
		"imapc_host=" + src.Host,
		"imapc_port=" + strconv.Itoa(src.Port),
		"imapc_user=" + src.Login,
		"imapc_password=" + src.Password,
		"imapc_ssl=no",
		"imapc_features=rfc822.size fetch-headers",
		"mail_prefetch_count=20",
	}
	args := []string{"-c", conf}
	for _, s := range settings {
		args = append(args, "-o", s)
	}
	return append(args, "backup", "-R", "-u", dstLogin, "imapc:")
}

// dovecotConfig returns the configuration file of the Dovecot instance in
// dir. imaptest does not export its path: it writes it as dovecot.conf in
// the instance's directory (see imaptest's config.go).
func dovecotConfig(dir string) (string, error) {
	path := filepath.Join(dir, "dovecot.conf")
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("doveadm needs the destination Dovecot's configuration, and imaptest no longer writes it to %s: export its path from imaptest", path)
		}
		return "", err
	}
	return path, nil
}
