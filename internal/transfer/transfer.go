// Package transfer is the copy engine: it migrates one account from a
// source IMAP server to a destination IMAP server (go-imap v2), with the
// guarantees of DESIGN §5. The source is only read (EXAMINE, BODY.PEEK);
// folders are translated across delimiters, prefixes and special-use roles;
// messages keep flags, keywords and INTERNALDATE; identities compared as
// multisets keep a re-run from copying anything twice; bodies stream from
// FETCH to APPEND. It knows nothing of HTTP or the database: sync state is
// an input and an output, progress a callback.
package transfer

import (
	"crypto/x509"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"time"
)

// Security says how a connection is secured.
type Security string

// The connection security modes.
const (
	SecurityTLS      Security = "ssl"      // TLS from the first byte (RFC 8314)
	SecurityStartTLS Security = "starttls" // STARTTLS (RFC 9051 §6.2.1)
	SecurityPlain    Security = "plain"    // none
)

// Server is where one side lives.
type Server struct {
	Host       string
	Port       int
	Security   Security
	SkipVerify bool           // accept any certificate
	RootCAs    *x509.CertPool // nil: the system's
}

// Address is the server's host:port.
func (s Server) Address() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Side is one account on one server.
type Side struct {
	Server
	Login    string
	Password string
}

// Options tune what is copied.
type Options struct {
	IncludeFolders  []*regexp.Regexp  // when set, only source folders matching one
	ExcludeFolders  []*regexp.Regexp  // source folders matching one are left out
	FolderMap       map[string]string // source name → destination name
	MaxMessageBytes int64             // larger messages are skipped; 0: no limit
	Since           time.Time         // older messages (INTERNALDATE) are skipped; zero: none
	CopyDeleted     bool              // copy messages flagged \Deleted too
}

// FolderState is what a run remembers of one source folder, so that the
// next run fetches only newer messages (DESIGN §5).
type FolderState struct {
	// Destination and Filter (Options.filterKey) are what the state was
	// written for: another destination folder or other message filters
	// make it void, so that no message is left behind by a changed plan.
	Destination string
	Filter      string
	UIDValidity uint32 // of the source folder
	LastUID     uint32 // every source message up to this UID is done
	// DestUIDValidity and DestUIDNext bound where a message this engine
	// appended but did not record (a crash) can be in the destination.
	DestUIDValidity uint32
	DestUIDNext     uint32
	// What the source folder looked like when the run that wrote this
	// state ended, and what it verified: a folder still alike is skipped
	// by the next run without being opened (RFC 5819 LIST-STATUS).
	SourceUIDNext  uint32
	SourceMessages uint32
	Covered        int  // source messages the destination was verified to hold
	Complete       bool // every message was settled: nothing to retry
}

// State is the sync state of an account: source folder name → FolderState.
type State map[string]FolderState

// Progress reports what a migration has done so far.
type Progress struct {
	Folder          string // source folder being copied
	FoldersTotal    int
	FoldersDone     int
	MessagesTotal   int // messages planned for copying so far
	MessagesCopied  int
	MessagesSkipped int // present already, or left out by the options
	MessagesFailed  int // refused by the destination
	BytesCopied     int64
}

// FolderResult is the outcome of one folder.
type FolderResult struct {
	Source      string
	Destination string
	// Verification (DESIGN §5): messages the source folder holds that this
	// migration covers, and messages the destination folder holds after it.
	SourceMessages      int
	DestinationMessages int
	Failures            []MessageFailure
	// Error says why the folder could not be copied at all (the server
	// refused to open or create it); the other folders go on.
	Error string
}

// Verified reports whether the destination holds at least every covered
// source message.
func (r FolderResult) Verified() bool {
	return r.Error == "" && r.DestinationMessages >= r.SourceMessages
}

// MessageFailure is a message the destination refused.
type MessageFailure struct {
	UID    uint32
	Reason string
}

// Result is the outcome of a migration.
type Result struct {
	Progress
	Folders []FolderResult
	State   State
}

// Job is one account to migrate.
type Job struct {
	Source      Side
	Destination Side
	Options     Options
	State       State // from the last run; nil for the first
	// OnProgress, when set, is called after each message and folder; it
	// must be quick (throttle in it if it writes anywhere).
	OnProgress func(Progress)
	// OnCheckpoint, when set, is called with a folder's state whenever it
	// advances, so that it can be stored before the migration ends.
	OnCheckpoint func(folder string, state FolderState)
	// OnFolderDone, when set, is called after each folder with its result
	// and the account's progress.
	OnFolderDone func(FolderResult, Progress)
	Logger       *slog.Logger
	Tuning       Tuning
}

// Tuning holds timeouts and retry settings; zero fields take defaults.
type Tuning struct {
	GreetingTimeout time.Duration // dial, TLS and greeting; default 30 s
	IdleTimeout     time.Duration // longest silence of a server mid-command; default 5 min
	Attempts        int           // tries after transient failures; default 5
	Backoff         time.Duration // first wait between tries, doubling; default 1 s
	// SingleAppend sends one APPEND per message even where the destination
	// offers MULTIAPPEND: for measuring, and for servers that mishandle it.
	SingleAppend bool
}

func (t Tuning) withDefaults() Tuning {
	if t.GreetingTimeout <= 0 {
		t.GreetingTimeout = 30 * time.Second
	}
	if t.IdleTimeout <= 0 {
		t.IdleTimeout = 5 * time.Minute
	}
	if t.Attempts <= 0 {
		t.Attempts = 5
	}
	if t.Backoff <= 0 {
		t.Backoff = time.Second
	}
	return t
}
