// Package cli is mailmigrate's command line client: subcommands for
// endpoints, tasks and accounts on the generated API client, and the live
// progress of a pass from the event WebSocket. It reads nothing from the
// process itself: arguments, environment, standard streams and whether
// stdout is a terminal are passed in, so tests drive it like a user would.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// System is what the CLI takes from the process it runs in.
type System struct {
	Getenv           func(string) string
	Stdin            io.Reader
	Stdout           io.Writer
	Stderr           io.Writer
	StdoutIsTerminal bool // redraw progress in place instead of printing lines
	// TerminalWidth is the terminal's width in columns now (it may be
	// resized); lines drawn in place are cut to it, since a wrapped line
	// would throw the redraw off. Nil means 80.
	TerminalWidth func() int
	// LocalTokenFile holds the token a service on this machine made for
	// itself (DATA_DIR/api-token); used for a loopback --url when no
	// token is given.
	LocalTokenFile string
}

// resources are the top-level words Run handles, with their commands.
var resources = map[string]func() []command{
	"endpoints": endpointCommands,
	"tasks":     taskCommands,
	"accounts":  accountCommands,
	"audit":     auditCommands,
	"users":     userCommands,
	"tokens":    tokenCommands,
}

// Usage is the CLI's part of mailmigrate's usage text.
const Usage = `  mailmigrate endpoints list|get|create|update|delete   manage IMAP servers
  mailmigrate tasks list|get|create|update|delete       manage migration tasks
  mailmigrate tasks test|run|cancel|watch|events|report ID   test logins, migrate, follow, report
  mailmigrate accounts list|get|create|update|delete|import TASK ...   manage mailboxes
  mailmigrate audit list|export                         who changed what, from where, and how it ended
  mailmigrate users list|add|delete|password            people, their roles and passwords
  mailmigrate tokens whoami|list|create|revoke          your personal API tokens
`

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the request failed, or the pass ended with failed accounts
	exitUsage   = 2 // the command line is wrong
)

// Resources are the resources the CLI's commands act on, sorted: the
// first word of a command line that Run takes.
func Resources() []string { return slices.Sorted(maps.Keys(resources)) }

// Run runs one CLI command, args starting with the resource
// ("endpoints", "tasks", "accounts", "audit", "users" or "tokens"), and
// returns the exit code.
func Run(ctx context.Context, args []string, sys System) int {
	return exitCode(dispatch(ctx, args, sys), sys.Stderr)
}

func dispatch(ctx context.Context, args []string, sys System) error {
	if len(args) == 0 || resources[args[0]] == nil {
		return usageErrorf(Usage, "want endpoints, tasks, accounts, audit, users or tokens")
	}
	commands := resources[args[0]]()
	if len(args) < 2 {
		fmt.Fprint(sys.Stderr, commandsUsage(args[0], commands))
		return errUsageShown
	}
	if args[1] == "help" || args[1] == "-h" || args[1] == "--help" {
		fmt.Fprint(sys.Stdout, commandsUsage(args[0], commands))
		return nil
	}
	for _, c := range commands {
		if c.name == args[1] {
			s := newSession(sys, args[0]+" "+c.name+" "+c.args, c.summary)
			defer s.close()
			return c.run(ctx, s, args[2:])
		}
	}
	return usageErrorf(commandsUsage(args[0], commands), "unknown command %q", args[0]+" "+args[1])
}

// command is one subcommand, e.g. "tasks run".
type command struct {
	name    string
	args    string // the positional arguments, e.g. "TASK ID"
	summary string
	run     func(ctx context.Context, s *session, args []string) error
}

func commandsUsage(resource string, commands []command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: mailmigrate %s COMMAND [flags]\n\nCommands:\n", resource)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-28s %s\n", c.name+" "+c.args, c.summary)
	}
	fmt.Fprintf(&b, "\nRun \"mailmigrate %s COMMAND -h\" for its flags.\n", resource)
	return b.String()
}

// usageError is a wrong command line: exit code 2, with the usage text.
type usageError struct {
	message string
	usage   string
}

func (e *usageError) Error() string { return e.message }

func usageErrorf(usage, format string, args ...any) error {
	return &usageError{message: fmt.Sprintf(format, args...), usage: usage}
}

// errUsageShown is a usage error whose text is already printed.
var errUsageShown = errors.New("usage")

// unfinishedError ends a followed pass that did not complete cleanly; the
// summary has said why.
type unfinishedError struct{ reason string }

func (e *unfinishedError) Error() string { return e.reason }

func exitCode(err error, stderr io.Writer) int {
	var usage *usageError
	var unfinished *unfinishedError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsageShown):
		return exitUsage
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "mailmigrate: %s\n\n%s", usage.message, usage.usage)
		return exitUsage
	case errors.As(err, &unfinished):
		fmt.Fprintln(stderr, "mailmigrate:", unfinished.reason)
		return exitFailure
	default:
		fmt.Fprintln(stderr, "mailmigrate:", err)
		return exitFailure
	}
}
