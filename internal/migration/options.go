package migration

import (
	"regexp"
	"slices"
	"time"
)

// Bounds of task options.
const (
	DefaultParallelAccounts = 4
	MaxParallelAccounts     = 64
	maxFolderPatterns       = 100
	maxFolderMapEntries     = 1000
	maxFolderNameBytes      = 1024
)

// sinceLayout is the text form of TaskOptions.Since.
const sinceLayout = time.DateOnly

// TaskOptions tune what a task copies and how (docs/design.md#task-options).
// Patterns and the date arrive as text and are parsed once, by
// ParseFolderPatterns and ParseSince, into the values the engine uses.
type TaskOptions struct {
	IncludeFolders   []*regexp.Regexp  // when set, only source folders matching one
	ExcludeFolders   []*regexp.Regexp  // source folders matching one are left out
	FolderMap        map[string]string // source folder name → destination folder name
	MaxMessageBytes  int64             // skip larger messages; 0: no limit
	Since            time.Time         // midnight UTC of the first day copied (by INTERNALDATE); zero: all
	ParallelAccounts int               // accounts migrated at once; 0: DefaultParallelAccounts
	MirrorDeletions  bool              // expunge the task's copies of messages expunged from the source
	GmailLabels      GmailLabels       // a Gmail source's labels; "": GmailFirstLabel
	// RefuseBlocked leaves out of a pass (of a selection, or a scheduled
	// one) the accounts whose newest plan has a blocking problem.
	RefuseBlocked bool
	// VerifyCopies is how the copies a pass makes are checked; "":
	// VerifyHeaders.
	VerifyCopies VerifyCopies
}

// VerifyCopies is how closely the copies a pass makes are checked
// (docs/design.md#verification).
type VerifyCopies string

// The depths of verification, in the order the API lists them.
const (
	// VerifyHeaders reads every new copy back: its size and its header
	// must be the bytes sent.
	VerifyHeaders VerifyCopies = "headers"
	// VerifyCounts only checks that every copy is there (the UID map):
	// for a destination known to re-encode mail, where every copy would
	// read back altered.
	VerifyCounts VerifyCopies = "counts"
	// VerifyFull reads every new copy back whole: all its bytes must be
	// those sent, the body's too, for the price of reading each copy
	// once more.
	VerifyFull VerifyCopies = "full"
)

// VerifyDepths are every VerifyCopies.
var VerifyDepths = []VerifyCopies{VerifyHeaders, VerifyCounts, VerifyFull}

// GmailLabels is how a task leaving Gmail treats its labels
// (transfer.GmailLabels).
type GmailLabels string

// The Gmail label policies, in the order the API lists them.
const (
	GmailFirstLabel GmailLabels = "first-label"
	GmailKeywords   GmailLabels = "keywords"
	GmailFolders    GmailLabels = "folders"
)

// GmailLabelPolicies are every GmailLabels.
var GmailLabelPolicies = []GmailLabels{GmailFirstLabel, GmailKeywords, GmailFolders}

// Normalize checks o and fills in defaults.
func (o *TaskOptions) Normalize() error {
	if err := checkFolderMap(o.FolderMap); err != nil {
		return err
	}
	if o.MaxMessageBytes < 0 {
		return invalid("options.max_message_bytes", "must be 0 (no limit) or more")
	}
	if o.ParallelAccounts < 0 || o.ParallelAccounts > MaxParallelAccounts {
		return invalid("options.parallel_accounts", "must be between 1 and %d, or 0 for %d", MaxParallelAccounts, DefaultParallelAccounts)
	}
	if o.ParallelAccounts == 0 {
		o.ParallelAccounts = DefaultParallelAccounts
	}
	if o.GmailLabels == "" {
		o.GmailLabels = GmailFirstLabel
	}
	if !slices.Contains(GmailLabelPolicies, o.GmailLabels) {
		return invalid("options.gmail_labels", "must be first-label|keywords|folders")
	}
	if o.VerifyCopies == "" {
		o.VerifyCopies = VerifyHeaders
	}
	if !slices.Contains(VerifyDepths, o.VerifyCopies) {
		return invalid("options.verify_copies", "must be headers|counts|full")
	}
	return nil
}

// ParseFolderPatterns compiles the RE2 patterns of field
// ("options.include_folders" or "options.exclude_folders").
func ParseFolderPatterns(field string, patterns []string) ([]*regexp.Regexp, error) {
	if len(patterns) > maxFolderPatterns {
		return nil, invalid(field, "must have at most %d patterns", maxFolderPatterns)
	}
	var compiled []*regexp.Regexp
	for _, p := range patterns {
		if !plainText(p, maxFolderNameBytes) {
			return nil, invalid(field, "pattern %.40q must be valid UTF-8 of at most %d bytes without control characters", p, maxFolderNameBytes)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, invalid(field, "pattern %q does not compile: %v", p, err)
		}
		compiled = append(compiled, re)
	}
	return compiled, nil
}

// FolderPatternTexts is the text of patterns, as ParseFolderPatterns took it.
func FolderPatternTexts(patterns []*regexp.Regexp) []string {
	var texts []string
	for _, re := range patterns {
		texts = append(texts, re.String())
	}
	return texts
}

// ParseSince reads options.since: a day as YYYY-MM-DD, or "" for none.
func ParseSince(text string) (time.Time, error) {
	if text == "" {
		return time.Time{}, nil
	}
	day, err := time.Parse(sinceLayout, text)
	if err != nil {
		return time.Time{}, invalid("options.since", "must be a date like 2024-01-31")
	}
	return day, nil
}

// SinceText is the text form of TaskOptions.Since, as ParseSince took it.
func SinceText(since time.Time) string {
	if since.IsZero() {
		return ""
	}
	return since.Format(sinceLayout)
}

func checkFolderMap(folderMap map[string]string) error {
	if len(folderMap) > maxFolderMapEntries {
		return invalid("options.folder_map", "must have at most %d entries", maxFolderMapEntries)
	}
	for from, to := range folderMap {
		for _, name := range []string{from, to} {
			if name == "" || !plainText(name, maxFolderNameBytes) {
				return invalid("options.folder_map", "entry %.40q → %.40q: folder names must be non-empty UTF-8 of at most %d bytes without control characters", from, to, maxFolderNameBytes)
			}
		}
	}
	return nil
}
