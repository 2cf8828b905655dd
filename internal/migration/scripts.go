package migration

import (
	"fmt"
	"strings"
)

// ScriptsEnd is what became of an account's Sieve scripts (filters,
// vacation replies) at its last attempt, moved over ManageSieve after its
// messages (docs/design.md#sieve-scripts). Scripts only ever add to the
// destination: one it holds alone is never deleted.
type ScriptsEnd struct {
	// Copied were put on the destination (new, or changed on the source);
	// Unchanged were there as the source has them.
	Copied    []string `json:"copied,omitempty"`
	Unchanged []string `json:"unchanged,omitempty"`
	// Active is the source's active script, active on the destination
	// too; "" when the source has none.
	Active string `json:"active,omitempty"`
	// Renamed are the folders the scripts file into that the task's
	// folder plan renamed, rewritten in the copies.
	Renamed []ScriptRename `json:"renamed,omitempty"`
	// Refused are the scripts the destination would not take, in its
	// words; Unread those whose folders could not be read, copied as
	// they are.
	Refused []ScriptProblem `json:"refused,omitempty"`
	Unread  []ScriptProblem `json:"unread,omitempty"`
	// Kept are the user's own changes on the destination an attempt
	// left alone: a copy edited there since an attempt put it, or another
	// script made active there.
	Kept []ScriptProblem `json:"kept,omitempty"`
	// Error says why no script moved (a side without ManageSieve, a
	// refused login); the messages are not affected.
	Error string `json:"error,omitempty"`
}

// ScriptRename is a folder a script files into, renamed by the plan.
type ScriptRename struct {
	Script string `json:"script"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// ScriptProblem is a script and what was said of it.
type ScriptProblem struct {
	Script string `json:"script"`
	Reason string `json:"reason"`
}

// Problem is what an operator must look at, in words; "" when every
// script moved.
func (s ScriptsEnd) Problem() string {
	var problems []string
	if s.Error != "" {
		problems = append(problems, "Sieve scripts not moved: "+s.Error)
	}
	for _, r := range s.Refused {
		problems = append(problems, fmt.Sprintf("Sieve script %q refused by the destination: %s", r.Script, r.Reason))
	}
	return strings.Join(problems, "; ")
}

// Summary says in one line what happened to the scripts.
func (s ScriptsEnd) Summary() string {
	if s.Error != "" && len(s.Copied)+len(s.Unchanged)+len(s.Refused)+len(s.Kept) == 0 {
		return "not moved: " + s.Error
	}
	return s.describe(fmt.Sprintf("%d copied", len(s.Copied)))
}

// PlanSummary says in one line what a pass would do with the scripts, as
// a plan found them (Copied: would be put).
func (s ScriptsEnd) PlanSummary() string {
	if s.Error != "" && len(s.Copied)+len(s.Unchanged)+len(s.Refused)+len(s.Kept) == 0 {
		return "cannot move: " + s.Error
	}
	return s.describe(fmt.Sprintf("%d to copy", len(s.Copied)))
}

// describe lists the rest after copied, the count of scripts put.
func (s ScriptsEnd) describe(copied string) string {
	parts := []string{copied, fmt.Sprintf("%d unchanged", len(s.Unchanged))}
	if len(s.Refused) > 0 {
		names := make([]string, len(s.Refused))
		for i, r := range s.Refused {
			names[i] = fmt.Sprintf("%s (%s)", r.Script, r.Reason)
		}
		parts = append(parts, fmt.Sprintf("%d refused: %s", len(s.Refused), strings.Join(names, ", ")))
	}
	if s.Active != "" {
		parts = append(parts, "active: "+s.Active)
	}
	if len(s.Renamed) > 0 {
		renames := make([]string, len(s.Renamed))
		for i, r := range s.Renamed {
			renames[i] = fmt.Sprintf("%s: %q → %q", r.Script, r.From, r.To)
		}
		parts = append(parts, "folders renamed: "+strings.Join(renames, ", "))
	}
	for _, u := range s.Unread {
		parts = append(parts, fmt.Sprintf("%s copied as it is (%s)", u.Script, u.Reason))
	}
	for _, k := range s.Kept {
		parts = append(parts, fmt.Sprintf("%s kept: %s", k.Script, k.Reason))
	}
	return strings.Join(parts, "; ")
}
