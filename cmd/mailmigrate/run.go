package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"

	"golang.org/x/term"

	"github.com/mailmigrate/mailmigrate/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

const usage = `mailmigrate moves mailboxes from one IMAP server to another.

Usage:
  mailmigrate serve [flags]     run the service (API, Swagger UI at /docs/)
  mailmigrate migrate [flags]   apply database migrations and exit
  mailmigrate version           print the version
` + cli.Usage + `
Run "mailmigrate serve -h" for the settings; each has a MAILMIGRATE_* variable.
The client commands talk to a running service: --url or MAILMIGRATE_URL
(default http://127.0.0.1:8080), --token or MAILMIGRATE_API_TOKEN. Without
a configured token, serve makes one and keeps it in DATA_DIR/api-token,
where the client commands on the same machine find it.
`

// run is the whole program behind main, with its inputs passed in so that
// tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], getenv, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "mailmigrate", buildVersion())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		if slices.Contains(cli.Resources(), args[0]) {
			return cli.Run(ctx, args, cli.System{Getenv: getenv, Stdin: os.Stdin, Stdout: stdout, Stderr: stderr,
				StdoutIsTerminal: isTerminal(stdout), TerminalWidth: func() int { return terminalWidth(stdout) },
				LocalTokenFile: localTokenFile(getenv)})
		}
		fmt.Fprintf(stderr, "mailmigrate: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintln(stderr, "mailmigrate:", err)
		return 1
	}
}

// errUsage marks an error the flag package has already reported.
var errUsage = errors.New("usage")

// isTerminal says whether w is a terminal, where progress is redrawn in
// place rather than printed line by line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is the width of the terminal w, 0 if unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
