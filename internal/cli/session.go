package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// defaultURL is where `mailmigrate serve` listens by default.
const defaultURL = "http://127.0.0.1:8080"

// apiPath is the API's base path on the server (docs/design.md#base-path-and-versioning).
const apiPath = "/api/v1"

// session is one command's connection settings, output format and client.
type session struct {
	sys    System
	flags  *flag.FlagSet
	usage  string // e.g. "tasks run ID"
	url    string // server root, without the API path
	token  string
	output string // table or json
	client *api.ClientWithResponses
	http   *http.Client
}

func newSession(sys System, usage, summary string) *session {
	s := &session{sys: sys, usage: strings.TrimSpace(usage)}
	s.flags = flag.NewFlagSet("mailmigrate "+s.usage, flag.ContinueOnError)
	s.flags.SetOutput(sys.Stderr)
	s.flags.Usage = func() {
		fmt.Fprintf(s.flags.Output(), "Usage: mailmigrate %s [flags]\n\n%s.\n\nFlags:\n", s.usage, summary)
		s.flags.PrintDefaults()
	}
	s.flags.StringVar(&s.url, "url", envOr(sys.Getenv, "MAILMIGRATE_URL", defaultURL), "the service's address (MAILMIGRATE_URL)")
	s.flags.StringVar(&s.token, "token", sys.Getenv("MAILMIGRATE_API_TOKEN"),
		"API token, sent as Authorization: Bearer (MAILMIGRATE_API_TOKEN; prefer the variable: ps shows flags)")
	s.flags.StringVar(&s.output, "output", "table", "table or json")
	return s
}

func envOr(getenv func(string) string, key, fallback string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return fallback
}

// parse reads the flags, which may come before, between or after the
// positional arguments, wants exactly positional of those, and connects
// the client.
func (s *session) parse(args []string, positional int) ([]string, error) {
	var rest []string
	for {
		if err := s.flags.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, err
			}
			return nil, errUsageShown // the flag package has said what is wrong
		}
		if s.flags.NArg() == 0 {
			break
		}
		rest = append(rest, s.flags.Arg(0))
		args = s.flags.Args()[1:]
	}
	if positional == 0 && len(rest) > 0 {
		return nil, s.usageErrorf("unexpected argument %q", rest[0])
	}
	if len(rest) != positional {
		return nil, s.usageErrorf("want %s, got %d arguments", argsOf(s.usage), len(rest))
	}
	if s.output != "table" && s.output != "json" {
		return nil, s.usageErrorf("--output %q: want table or json", s.output)
	}
	return rest, s.connect()
}

// argsOf returns the positional part of a usage line such as "tasks run ID".
func argsOf(usage string) string {
	fields := strings.Fields(usage)
	return strings.Join(fields[min(2, len(fields)):], " ")
}

func (s *session) usageErrorf(format string, args ...any) error {
	var b strings.Builder
	s.flags.SetOutput(&b)
	s.flags.Usage()
	s.flags.SetOutput(s.sys.Stderr)
	return usageErrorf(b.String(), format, args...)
}

func (s *session) connect() error {
	s.url = strings.TrimSuffix(strings.TrimSuffix(s.url, "/"), apiPath)
	if !strings.HasPrefix(s.url, "http://") && !strings.HasPrefix(s.url, "https://") {
		return s.usageErrorf("--url %q: want http://HOST:PORT or https://…", s.url)
	}
	s.http = &http.Client{Timeout: time.Minute}
	if s.token == "" {
		s.token = s.localToken()
	}
	client, err := api.NewClientWithResponses(s.url+apiPath, api.WithHTTPClient(s.http), api.WithRequestEditorFn(s.authorize))
	s.client = client
	return err
}

// localToken is the token that a service on this machine made for itself
// in its data dir, for a service at a loopback address; "" otherwise. It
// is never sent elsewhere: it opens the local service.
func (s *session) localToken() string {
	u, err := url.Parse(s.url)
	if err != nil || s.sys.LocalTokenFile == "" || !IsLoopbackHost(u.Hostname()) {
		return ""
	}
	data, err := os.ReadFile(s.sys.LocalTokenFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// IsLoopbackHost reports whether host names the loopback interface only:
// localhost, 127.0.0.0/8 or ::1. An empty host and 0.0.0.0 or :: mean
// every interface, so they are not loopback. The service's exposure
// warning and the CLI's local token share it.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// close lets go of the connections kept for reuse: the process may go on
// (tests, or a program that embeds the CLI).
func (s *session) close() {
	if s.http != nil {
		s.http.CloseIdleConnections()
	}
}

// authorize adds the token to a request. The server side of tokens may be
// off (loopback without a token); sending one then does no harm.
func (s *session) authorize(_ context.Context, req *http.Request) error {
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	return nil
}

// parseID reads a positional id.
func (s *session) parseID(name, text string) (int64, error) {
	id, err := strconv.ParseInt(text, 10, 64)
	if err != nil || id <= 0 {
		return 0, s.usageErrorf("%s %q: want a positive integer", name, text)
	}
	return id, nil
}

// apiError is a response other than the expected one; the text is the
// server's plain-text error body.
type apiError struct {
	status int
	text   string
}

func (e *apiError) Error() string { return e.text }

// response is what every generated response has.
type response interface {
	StatusCode() int
	GetBody() []byte
}

// expect turns a generated client call's result into an error unless it
// answered want.
func expect(resp response, err error, want int) error {
	if err != nil {
		return err
	}
	if resp.StatusCode() == want {
		return nil
	}
	text := strings.TrimSpace(string(resp.GetBody()))
	if resp.StatusCode() == http.StatusUnauthorized {
		text += ": give the API token in MAILMIGRATE_API_TOKEN (a service on this machine keeps its own in its data dir's api-token file)"
	}
	if text == "" {
		text = fmt.Sprintf("%d %s", resp.StatusCode(), http.StatusText(resp.StatusCode()))
	}
	return &apiError{status: resp.StatusCode(), text: text}
}

// readSecret reads a password from a file ("-" is stdin), without the
// line end an editor or echo adds; or from the variable env when no file
// is named. Neither is ever printed.
func (s *session) readSecret(file, env string) (string, error) {
	if file == "" {
		return s.sys.Getenv(env), nil
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(s.sys.Stdin, 64<<10))
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return "", fmt.Errorf("password file: %w", err)
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}
