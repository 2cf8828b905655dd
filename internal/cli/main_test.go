package cli_test

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/cli"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

func TestMain(m *testing.M) {
	dbtest.Main(m)
}

// result is what one CLI command did.
type result struct {
	code           int
	stdout, stderr string
}

// user drives the CLI against one service, as a person at a shell would.
type user struct {
	t        *testing.T
	env      map[string]string
	stdin    string // for the next command only
	terminal bool   // stdout is a terminal
	// live, when set, also gets the next command's stdout as it is
	// written, for a command that waits on the test.
	live io.Writer
	// localTokenFile stands for the data dir's api-token file.
	localTokenFile string
}

func newUser(t *testing.T, svc *servicetest.Service) *user {
	// The token is sent on every request; the service ignores it while
	// tokens are not configured.
	return &user{t: t, env: map[string]string{"MAILMIGRATE_URL": svc.URL, "MAILMIGRATE_API_TOKEN": "test-token"}}
}

// run runs `mailmigrate ARGS...` through the CLI and returns what it did.
func (u *user) run(args ...string) result {
	u.t.Helper()
	var stdout, stderr bytes.Buffer
	var out io.Writer = &stdout
	if u.live != nil {
		out = io.MultiWriter(&stdout, u.live)
	}
	sys := cli.System{
		Getenv: func(key string) string { return u.env[key] },
		Stdin:  strings.NewReader(u.stdin),
		Stdout: out,
		Stderr: &stderr,

		StdoutIsTerminal: u.terminal,
		LocalTokenFile:   u.localTokenFile,
	}
	u.stdin, u.live = "", nil
	code := cli.Run(context.Background(), args, sys)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// ok runs a command that must succeed and returns its stdout.
func (u *user) ok(args ...string) string {
	u.t.Helper()
	r := u.run(args...)
	if r.code != 0 {
		u.t.Fatalf("mailmigrate %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// id runs a create command and returns the id it printed.
func (u *user) id(args ...string) string {
	u.t.Helper()
	out := strings.TrimSpace(u.ok(args...))
	if out == "" || strings.ContainsAny(out, " \n") {
		u.t.Fatalf("mailmigrate %s printed %q, want an id", strings.Join(args, " "), out)
	}
	return out
}

func regexpMatch(pattern, text string) bool {
	return regexp.MustCompile(pattern).MatchString(text)
}
