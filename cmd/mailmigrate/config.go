package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/app"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// config is every setting of the service, from flags with MAILMIGRATE_*
// environment fallbacks; flags win.
type config struct {
	Listen          string
	DataDir         string
	DatabaseURL     string
	SecretKey       string // base64; from the environment only, never a flag (ps shows flags)
	SecretKeyFile   string
	LogLevel        string
	LogFormat       string
	ShutdownTimeout time.Duration
	// Workers bounds the accounts this process migrates at once.
	Workers int
	// ConnectionsPerHost bounds the IMAP connections to one server host
	// across every process on the database (0: no bound).
	ConnectionsPerHost int
	// LeaseExpiry is how soon the accounts of a process that died are
	// taken over by another (or by this one after a restart).
	LeaseExpiry time.Duration
	// WorkerID names this process in the job queue.
	WorkerID string
	// AuditRetention is how long the audit trail keeps a request.
	AuditRetention time.Duration

	// APIToken is the bearer token the API requires; empty: none. It comes
	// from APITokenFile when that is set.
	APIToken       string
	APITokenFile   string
	InsecureNoAuth bool // serve without asking for any token
	// AllowedHosts are the host names, beyond IP addresses and localhost,
	// that requests may name in Host (DNS rebinding).
	AllowedHosts []string
	// WebhookAllowedHosts are the receivers webhooks may reach at an
	// internal address.
	WebhookAllowedHosts []string
	// MaxFailedLogins bounds the failed logins login tests cause on one
	// server host in 10 minutes; 0: no bound.
	MaxFailedLogins int

	// HTTP server timeouts (the event stream is exempt from Read and Write).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration

	MaxJSONBodyBytes int64
	MaxCSVBodyBytes  int64
	MaxEventStreams  int

	// SMTPURL is the server tasks mail their summaries through; empty:
	// none. Its password comes from the environment or SMTPPasswordFile,
	// never a flag.
	SMTPURL          string
	SMTPFrom         string
	SMTPPassword     string
	SMTPPasswordFile string
}

// settingsHelp heads the flags in -h: where else settings come from.
const settingsHelp = `Each flag may be given as the environment variable named in its help
instead (for a systemd EnvironmentFile); a flag wins over its variable.
MAILMIGRATE_SECRET_KEY (base64 of 32 bytes) is read from the environment
only, so that ps never shows it; it overrides --secret-key-file.
`

// parseConfig reads flags for command name, falling back to the environment.
func parseConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	env := func(key, fallback string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return fallback
	}
	var cfg config
	fs := flag.NewFlagSet("mailmigrate "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: mailmigrate %s [flags]\n\n%s\nFlags:\n", name, settingsHelp)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.Listen, "listen", env("MAILMIGRATE_LISTEN", "127.0.0.1:8080"), "address to serve HTTP on (MAILMIGRATE_LISTEN)")
	fs.StringVar(&cfg.DataDir, "data-dir", env("MAILMIGRATE_DATA_DIR", defaultDataDir(getenv)), "directory for the private database and keys (MAILMIGRATE_DATA_DIR)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", env("MAILMIGRATE_DATABASE_URL", getenv("DATABASE_URL")),
		"PostgreSQL 13+ connection string; empty: run a private PostgreSQL in the data dir (MAILMIGRATE_DATABASE_URL or DATABASE_URL)")
	fs.StringVar(&cfg.SecretKeyFile, "secret-key-file", getenv("MAILMIGRATE_SECRET_KEY_FILE"),
		"file holding the key that encrypts mailbox passwords, created on first start; default DATA_DIR/secret.key. "+
			"MAILMIGRATE_SECRET_KEY (base64 of 32 bytes) overrides it (MAILMIGRATE_SECRET_KEY_FILE)")
	fs.StringVar(&cfg.LogLevel, "log-level", env("MAILMIGRATE_LOG_LEVEL", "info"), "debug, info, warn or error (MAILMIGRATE_LOG_LEVEL)")
	fs.StringVar(&cfg.LogFormat, "log-format", env("MAILMIGRATE_LOG_FORMAT", "text"), "text or json (MAILMIGRATE_LOG_FORMAT)")
	staged := []stagedSetting{
		{"shutdown-timeout", "30s", "how long in-flight requests may finish after SIGTERM", duration(&cfg.ShutdownTimeout, 0)},
		{"read-header-timeout", "10s", "time a client has to send a request's headers (slow clients cannot hold connections)", duration(&cfg.ReadHeaderTimeout, 0)},
		{"read-timeout", httpapi.DefaultReadTimeout.String(), "time a client has to send a whole request, body included (not the event stream)", duration(&cfg.ReadTimeout, 0)},
		{"write-timeout", httpapi.DefaultWriteTimeout.String(), "time from a request's start to the end of its response (not the event stream)", duration(&cfg.WriteTimeout, 0)},
		{"idle-timeout", "2m", "how long an idle keep-alive connection stays open", duration(&cfg.IdleTimeout, 0)},
		{"workers", "16", "accounts this process migrates at once (connection tests have 8 workers of their own)", number(&cfg.Workers, 1, 1000)},
		{"max-connections-per-host", "30", "IMAP connections to one server host across all processes; an account holds 1 " +
			"to its source and up to 2 to its destination (one session, and a second for a Gmail destination's labels); 0: no limit", number(&cfg.ConnectionsPerHost, 0, 0)},
		{"max-failed-logins", "4", "failed logins that login tests may cause on one server host in 10 minutes, under fail2ban's " +
			"default of 5, so that the server does not ban this host; more wait for the window to move on; 0: no limit " +
			"(a server that trusts this host)", number(&cfg.MaxFailedLogins, 0, 0)},
		{"lease-expiry", "60s", "how long a running account may go without a sign of life before its process is taken " +
			"for dead and the account resumes elsewhere", duration(&cfg.LeaseExpiry, 2*time.Second)},
		{"audit-retention", app.DefaultAuditRetention.String(), "how long the audit trail keeps a request that changed something " +
			"(who, when, from where, what, the outcome)", duration(&cfg.AuditRetention, time.Hour)},
	}
	for i := range staged {
		staged[i].register(fs, env)
	}
	// The token's flag has no default from the environment: -h prints
	// defaults, and would print the token.
	fs.StringVar(&cfg.APIToken, "api-token", "",
		"a bearer token the API and the event stream take (at least 16 characters, e.g. openssl rand -hex 32); "+
			"empty: the service makes one and keeps it in DATA_DIR/api-token. Prefer the variable or --api-token-file: other users see flags in ps (MAILMIGRATE_API_TOKEN)")
	fs.StringVar(&cfg.APITokenFile, "api-token-file", getenv("MAILMIGRATE_API_TOKEN_FILE"),
		"file holding the API token (surrounding whitespace ignored) (MAILMIGRATE_API_TOKEN_FILE)")
	insecure, err := envBool(getenv, "MAILMIGRATE_INSECURE_NO_AUTH")
	if err != nil {
		return cfg, err
	}
	fs.BoolVar(&cfg.InsecureNoAuth, "insecure-no-auth", insecure,
		"serve without asking for any token, for a service behind a proxy that authenticates for it: "+
			"anyone who reaches the port reads and changes every task and its passwords (MAILMIGRATE_INSECURE_NO_AUTH)")
	webhookHosts := fs.String("webhook-allowed-hosts", getenv("MAILMIGRATE_WEBHOOK_ALLOWED_HOSTS"),
		"comma-separated receivers (host names or addresses) that webhooks may call at an internal address "+
			"(loopback, private, link-local); others are called at public addresses only (MAILMIGRATE_WEBHOOK_ALLOWED_HOSTS)")
	allowedHosts := fs.String("allowed-hosts", getenv("MAILMIGRATE_ALLOWED_HOSTS"),
		"comma-separated host names the service is reached by, beyond IP addresses and localhost (e.g. migrate.example.com); "+
			"a request naming another host is refused, against DNS rebinding; * allows any (MAILMIGRATE_ALLOWED_HOSTS)")
	fs.Int64Var(&cfg.MaxJSONBodyBytes, "max-json-body", envInt(getenv, "MAILMIGRATE_MAX_JSON_BODY", httpapi.DefaultMaxJSONBodyBytes),
		"largest JSON request body in bytes; larger answers 413 (MAILMIGRATE_MAX_JSON_BODY)")
	fs.Int64Var(&cfg.MaxCSVBodyBytes, "max-csv-body", envInt(getenv, "MAILMIGRATE_MAX_CSV_BODY", httpapi.DefaultMaxCSVBodyBytes),
		"largest imported CSV file in bytes; larger answers 413 (MAILMIGRATE_MAX_CSV_BODY)")
	fs.IntVar(&cfg.MaxEventStreams, "max-event-streams", int(envInt(getenv, "MAILMIGRATE_MAX_EVENT_STREAMS", httpapi.DefaultMaxEventStreams)),
		"live event streams (WebSockets) open at once; one more answers 503 (MAILMIGRATE_MAX_EVENT_STREAMS)")
	fs.StringVar(&cfg.SMTPURL, "smtp-url", getenv("MAILMIGRATE_SMTP_URL"),
		"SMTP server that tasks mail their summaries and reports through: smtp://[user@]host[:587] (STARTTLS), smtps://…:465 or "+
			"smtp+plain://…:25 (no TLS); the password from MAILMIGRATE_SMTP_PASSWORD or --smtp-password-file; empty: no mail (MAILMIGRATE_SMTP_URL)")
	fs.StringVar(&cfg.SMTPFrom, "smtp-from", getenv("MAILMIGRATE_SMTP_FROM"), "the sender address of the mails (MAILMIGRATE_SMTP_FROM)")
	fs.StringVar(&cfg.SMTPPasswordFile, "smtp-password-file", getenv("MAILMIGRATE_SMTP_PASSWORD_FILE"),
		"file holding the SMTP user's password (MAILMIGRATE_SMTP_PASSWORD_FILE)")
	fs.StringVar(&cfg.WorkerID, "worker-id", getenv("MAILMIGRATE_WORKER_ID"),
		"name of this process in the job queue (river_job.attempted_by); default: host name and start time (MAILMIGRATE_WORKER_ID)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mailmigrate %s: unexpected argument %q\n", name, fs.Arg(0))
		return cfg, errUsage
	}
	cfg.SecretKey = getenv("MAILMIGRATE_SECRET_KEY")
	cfg.AllowedHosts = splitList(*allowedHosts)
	cfg.WebhookAllowedHosts = splitList(*webhookHosts)
	cfg.SMTPPassword = getenv("MAILMIGRATE_SMTP_PASSWORD")
	if cfg.APIToken == "" {
		cfg.APIToken = getenv("MAILMIGRATE_API_TOKEN")
	}
	if cfg.SecretKeyFile == "" && cfg.DataDir != "" {
		cfg.SecretKeyFile = filepath.Join(cfg.DataDir, "secret.key")
	}
	for _, st := range staged {
		if err := st.parse(st.value); err != nil {
			return cfg, fmt.Errorf("%s %q: %w", strings.ReplaceAll(st.name, "-", " "), st.value, err)
		}
	}
	return cfg, cfg.validate()
}

func (c config) validate() error {
	if _, err := c.slogLevel(); err != nil {
		return err
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("log format %q: want text or json", c.LogFormat)
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		return errors.New("no data dir: set --data-dir or MAILMIGRATE_DATA_DIR")
	}
	if c.SecretKey == "" && c.SecretKeyFile == "" {
		return errors.New("no secret key: set MAILMIGRATE_SECRET_KEY, --secret-key-file or --data-dir")
	}
	if c.APIToken != "" && c.APITokenFile != "" {
		return errors.New("API token given twice: set either MAILMIGRATE_API_TOKEN (--api-token) or MAILMIGRATE_API_TOKEN_FILE (--api-token-file)")
	}
	if c.InsecureNoAuth && (c.APIToken != "" || c.APITokenFile != "") {
		return errors.New("an API token and --insecure-no-auth: choose one (MAILMIGRATE_API_TOKEN or MAILMIGRATE_INSECURE_NO_AUTH)")
	}
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 {
		return errors.New("--read-header-timeout, --read-timeout, --write-timeout and --idle-timeout must be positive")
	}
	if c.MaxJSONBodyBytes <= 0 || c.MaxCSVBodyBytes <= 0 || c.MaxEventStreams <= 0 {
		return errors.New("--max-json-body, --max-csv-body and --max-event-streams must be positive")
	}
	return nil
}

// mailServer is the SMTP server of the settings; nil without one.
func (c config) mailServer() (*delivery.MailServer, error) {
	if c.SMTPURL == "" {
		return nil, nil
	}
	password := c.SMTPPassword
	if c.SMTPPasswordFile != "" {
		if password != "" {
			return nil, errors.New("SMTP password given twice: set either MAILMIGRATE_SMTP_PASSWORD or --smtp-password-file")
		}
		data, err := os.ReadFile(c.SMTPPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("SMTP password file: %w", err)
		}
		password = strings.TrimSpace(string(data))
	}
	server, err := delivery.ParseMailServer(c.SMTPURL, password, c.SMTPFrom)
	if err != nil {
		return nil, err
	}
	return &server, nil
}

// limits are the HTTP limits of the settings.
func (c config) limits() httpapi.Limits {
	return httpapi.Limits{
		MaxJSONBodyBytes: c.MaxJSONBodyBytes,
		MaxCSVBodyBytes:  c.MaxCSVBodyBytes,
		MaxEventStreams:  c.MaxEventStreams,
		ReadTimeout:      c.ReadTimeout,
		WriteTimeout:     c.WriteTimeout,
	}
}

// stagedSetting is a flag with a MAILMIGRATE_* fallback whose value is
// parsed after all flags, so that a bad value names its setting whether
// it came from the flag or the variable.
type stagedSetting struct {
	name  string
	value string // the default, then the variable's, then the flag's
	usage string
	parse func(string) error
}

func (st *stagedSetting) variable() string {
	return "MAILMIGRATE_" + strings.ToUpper(strings.ReplaceAll(st.name, "-", "_"))
}

func (st *stagedSetting) register(fs *flag.FlagSet, env func(key, fallback string) string) {
	st.value = env(st.variable(), st.value)
	fs.Func(st.name, fmt.Sprintf("%s (%s, default %s)", st.usage, st.variable(), st.value), func(v string) error {
		st.value = v
		return nil
	})
}

// duration parses a duration of at least least into dst.
func duration(dst *time.Duration, least time.Duration) func(string) error {
	return func(text string) error {
		v, err := time.ParseDuration(text)
		if err != nil || v < least {
			if least > 0 {
				return fmt.Errorf("want a duration of %s or more, such as 60s", least)
			}
			return errors.New("want a duration such as 30s")
		}
		*dst = v
		return nil
	}
}

// number parses an integer from least to most (0: no bound) into dst.
func number(dst *int, least, most int) func(string) error {
	return func(text string) error {
		v, err := strconv.Atoi(text)
		if err != nil || v < least || (most > 0 && v > most) {
			if most == 0 {
				return fmt.Errorf("want %d or more", least)
			}
			return fmt.Errorf("want a number from %d to %d", least, most)
		}
		*dst = v
		return nil
	}
}

func envBool(getenv func(string) string, key string) (bool, error) {
	v := getenv(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", key, v)
	}
	return b, nil
}

// envInt is the variable's integer, or fallback when unset. A malformed
// value is passed on as -1, which validate rejects with the flag's name.
func envInt(getenv func(string) string, key string, fallback int64) int64 {
	v := getenv(key)
	if v == "" {
		return fallback
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func (c config) slogLevel() (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return level, fmt.Errorf("log level %q: want debug, info, warn or error", c.LogLevel)
	}
	return level, nil
}

func (c config) logger(w io.Writer) *slog.Logger {
	level, _ := c.slogLevel()
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// loginFailureLimit is the failed-login limit of the settings.
func (c config) loginFailureLimit() migration.LoginFailureLimit {
	if c.MaxFailedLogins == 0 {
		return migration.LoginFailureLimit{Max: -1}
	}
	return migration.LoginFailureLimit{Max: c.MaxFailedLogins, Window: migration.DefaultLoginFailureLimit.Window}
}

// splitList splits a comma-separated setting, dropping blanks.
func splitList(value string) []string {
	var items []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// defaultDataDir is /var/lib/mailmigrate for root (a path the unprivileged
// PostgreSQL account can reach) and the XDG data home for everybody else.
func defaultDataDir(getenv func(string) string) string {
	if os.Geteuid() == 0 {
		return "/var/lib/mailmigrate"
	}
	if xdg := getenv("XDG_DATA_HOME"); xdg != "" {
		return filepath.Join(xdg, "mailmigrate")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "mailmigrate")
	}
	return ""
}
