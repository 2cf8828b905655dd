package migration

import (
	"regexp"
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

// SinceLayout is the date format of TaskOptions.Since.
const SinceLayout = "2006-01-02"

// TaskOptions tune what a task copies and how (docs/design.md#task-options).
type TaskOptions struct {
	IncludeFolders   []string          // RE2 patterns; when set, only matching source folders
	ExcludeFolders   []string          // RE2 patterns of source folders to leave out
	FolderMap        map[string]string // source folder name → destination folder name
	MaxMessageBytes  int64             // skip larger messages; 0: no limit
	Since            string            // YYYY-MM-DD: only messages with a later INTERNALDATE; "": all
	ParallelAccounts int               // accounts migrated at once; 0: DefaultParallelAccounts
	MirrorDeletions  bool              // expunge the task's copies of messages expunged from the source
}

// Normalize checks o and fills in defaults.
func (o *TaskOptions) Normalize() error {
	if err := checkPatterns("options.include_folders", o.IncludeFolders); err != nil {
		return err
	}
	if err := checkPatterns("options.exclude_folders", o.ExcludeFolders); err != nil {
		return err
	}
	if err := checkFolderMap(o.FolderMap); err != nil {
		return err
	}
	if o.MaxMessageBytes < 0 {
		return invalid("options.max_message_bytes", "must be 0 (no limit) or more")
	}
	if o.Since != "" {
		if _, err := time.Parse(SinceLayout, o.Since); err != nil {
			return invalid("options.since", "must be a date like 2024-01-31")
		}
	}
	if o.ParallelAccounts < 0 || o.ParallelAccounts > MaxParallelAccounts {
		return invalid("options.parallel_accounts", "must be between 1 and %d, or 0 for %d", MaxParallelAccounts, DefaultParallelAccounts)
	}
	if o.ParallelAccounts == 0 {
		o.ParallelAccounts = DefaultParallelAccounts
	}
	return nil
}

func checkPatterns(field string, patterns []string) error {
	if len(patterns) > maxFolderPatterns {
		return invalid(field, "must have at most %d patterns", maxFolderPatterns)
	}
	for _, p := range patterns {
		if !plainText(p, maxFolderNameBytes) {
			return invalid(field, "pattern %.40q must be valid UTF-8 of at most %d bytes without control characters", p, maxFolderNameBytes)
		}
		if _, err := regexp.Compile(p); err != nil {
			return invalid(field, "pattern %q does not compile: %v", p, err)
		}
	}
	return nil
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
