// Package transfer is the copy engine: it migrates one account from a
// source IMAP server to a destination IMAP server (go-imap v2), with the
// guarantees of docs/design.md#copy-engine. The source is only read (EXAMINE, BODY.PEEK);
// folders are translated across delimiters, prefixes and special-use roles;
// messages keep flags, keywords and INTERNALDATE; identities compared as
// multisets keep a re-run from copying anything twice; bodies stream from
// FETCH to APPEND. It knows nothing of HTTP or the database: sync state is
// an input and an output, progress a callback.
package transfer

import (
	"log/slog"
	"regexp"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/progress"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// Options tune what is copied.
type Options struct {
	IncludeFolders  []*regexp.Regexp  // when set, only source folders matching one
	ExcludeFolders  []*regexp.Regexp  // source folders matching one are left out
	FolderMap       map[string]string // source name → destination name
	MaxMessageBytes int64             // larger messages are skipped; 0: no limit
	Since           time.Time         // older messages (INTERNALDATE) are skipped; zero: none
	CopyDeleted     bool              // copy messages flagged \Deleted too
	// MirrorDeletions expunges from the destination the copies this
	// engine made of messages since expunged from the source; nothing it
	// did not copy is ever touched.
	MirrorDeletions bool
	// GmailLabels is the policy for a Gmail source's labels; "": first-label.
	GmailLabels GmailLabels
	// SkipReadBack leaves the copies unread after they are made: they are
	// checked by count alone (readback.go), for a destination known to
	// re-encode every message.
	SkipReadBack bool
	// ReadBackBodies reads each copy back whole and compares a digest of
	// all its bytes with what was sent, not only its size and header: a
	// body rewritten at the same size shows too, for the price of
	// reading every copy once more.
	ReadBackBodies bool
}

// Progress reports what a migration has done so far: the account's
// figures, and the source folder being copied.
type Progress struct {
	Folder string
	progress.Figures
}

// FolderResult is the outcome of one folder.
type FolderResult struct {
	Source      string
	Destination string
	// Verification (docs/design.md#verification): the source messages this migration covers
	// (those the options let through, and those it copied before), and how
	// many of them have their own copy on the destination: mapped by UID
	// to a destination message that exists, found by APPENDUID (RFC 4315)
	// or by identity.
	SourceMessages      int
	DestinationMessages int
	Failures            []syncstate.MessageFailure
	// AlteredCount counts the copies the destination holds that differ
	// from what was sent (read back: size and header): those this attempt
	// read back, and those earlier passes found, until a pass that reads back
	// every copy (Job.ReadBackAll) finds them again or not. Altered names
	// the first few (syncstate.MaxAlteredExamples).
	AlteredCount int
	Altered      []AlteredCopy
	// DroppedKeywords are keywords of the source's messages that the
	// destination folder cannot keep (RFC 9051 §7.1, PERMANENTFLAGS), named
	// by the first attempt that meets them only.
	DroppedKeywords []string
	// Error says why the folder could not be copied at all (the server
	// refused to open or create it), and ErrorSide which server said so
	// ("source" or "destination"); the other folders go on.
	Error, ErrorSide string
	// Unchanged: neither folder changed since the last attempt brought it up
	// to date, and it was not opened.
	Unchanged bool
	// SourceOnly: Unchanged was judged from the source alone, whose
	// listing showed the account as its last complete pass left it; the
	// destination was not opened (Job.SourceOnlyDelta).
	SourceOnly bool
}

// Missing is how many covered source messages the destination lacks.
func (r FolderResult) Missing() int { return r.SourceMessages - r.DestinationMessages }

// Verified reports whether every covered source message has its copy on
// the destination, and no copy read back differs from what was sent.
func (r FolderResult) Verified() bool {
	return r.Error == "" && r.Missing() == 0 && r.AlteredCount == 0
}

// Result is the outcome of a migration.
type Result struct {
	Progress
	Folders []FolderResult
	// Scripts is what became of the account's Sieve scripts; nil when
	// they were not moved (the source names no ManageSieve service, or
	// the attempt ended before its messages did).
	Scripts *ScriptsResult
}

// Job is one account to migrate.
type Job struct {
	Source      imapconn.Side
	Destination imapconn.Side
	Options     Options
	// State keeps the sync state between attempts; nil: a fresh MemoryState,
	// so that every folder is compared by identity.
	State syncstate.StateStore
	// OnProgress, when set, is called after each message and folder; it
	// must be quick (throttle in it if it writes anywhere).
	OnProgress func(Progress)
	// OnFolderDone, when set, is called after each folder with its result
	// and the account's progress.
	OnFolderDone func(FolderResult, Progress)
	// OnThrottled, when set, is called when a server asks to slow down,
	// before a pause the attempt waits out; a longer one ends it with a
	// *PausedError instead.
	OnThrottled func(Throttle)
	// Traffic counts the bytes each mailbox moves, for the daily budgets
	// of Limits; nil: no budget is kept.
	Traffic provider.TrafficLedger
	// SourceOnlyDelta lets a delta pass end at the source: when the
	// source's listing (LIST-STATUS, with HIGHESTMODSEQ) shows every folder
	// as the last complete pass left it, the account is done without a
	// login to the destination. A change made on the destination alone is
	// then not seen: the final pass and a verifying pass leave this false
	// and look at both sides (docs/design.md#source-only-deltas).
	SourceOnlyDelta bool
	// ReadBackAll makes a verifying pass (the final pass): every copy of
	// every folder is read back and compared with its source message, the
	// earlier passes' copies too, at headers at least (Options.SkipReadBack
	// does not apply), and no folder is taken for unchanged.
	ReadBackAll bool
	Logger      *slog.Logger
	Tuning      Tuning
}

// Tuning holds timeouts and retry settings; zero fields take defaults.
type Tuning struct {
	GreetingTimeout time.Duration // dial, TLS and greeting; default 30 s
	IdleTimeout     time.Duration // longest silence of a server mid-command; default 5 min
	Tries           int           // tries in all, after transient failures; default 5
	Backoff         time.Duration // first wait between tries, doubling; default 1 s
	// SingleAppend sends one APPEND per message even where the destination
	// offers MULTIAPPEND: for measuring, and for servers that mishandle it.
	SingleAppend bool
	// Window is how many source messages are compared with the UID map at
	// once: memory is bounded by it whatever the folder's size; default
	// 4096.
	Window int
	// ThrottlePause is the first pause after a throttling answer without
	// a suggested time, doubling after each; default 1 minute.
	ThrottlePause time.Duration
	// Throttles is how many throttling answers one attempt bears before it
	// fails (to be retried later); default 100.
	Throttles int
	// LongestWait is the longest pause an attempt waits out itself; a
	// longer one (a daily budget spent) ends the attempt with a *PausedError, for
	// the account to be started again when the pause ends; default 5
	// minutes.
	LongestWait time.Duration
}

// timeouts are the connection layer's share of t.
func (t Tuning) timeouts() imapconn.Timeouts {
	return imapconn.Timeouts{Greeting: t.GreetingTimeout, Idle: t.IdleTimeout}
}

func (t Tuning) withDefaults() Tuning {
	if t.GreetingTimeout <= 0 {
		t.GreetingTimeout = 30 * time.Second
	}
	if t.IdleTimeout <= 0 {
		t.IdleTimeout = 5 * time.Minute
	}
	if t.ThrottlePause <= 0 {
		t.ThrottlePause = time.Minute
	}
	if t.Throttles <= 0 {
		t.Throttles = 100
	}
	if t.LongestWait <= 0 {
		t.LongestWait = 5 * time.Minute
	}
	if t.Tries <= 0 {
		t.Tries = 5
	}
	if t.Backoff <= 0 {
		t.Backoff = time.Second
	}
	if t.Window <= 0 {
		t.Window = 4096
	}
	return t
}
