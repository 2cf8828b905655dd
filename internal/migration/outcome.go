package migration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// How an account's attempt ends, in the domain's words: the worker translates
// what the copy engine reports into AttemptEnd and FolderEnd, and the rules
// here decide the account's state and the sentences of its events.

// Party is one side of an account's attempt as an event names it.
type Party struct {
	Side        string // "source" or "destination"
	Login, Host string
	Port        int
	// Shared names what the side logs in with that is the endpoint's,
	// not the account's (EndpointAuth.SharedCredential): a refusal then
	// is the endpoint's to mend. Empty for the account's own secret.
	Shared string
}

// AttemptParties name an account's attempt in its events. An event names the
// source's login, which is the account's name, and the destination's
// host, where the copies go; one about a failure names the side that
// failed.
type AttemptParties struct {
	TaskID, AccountID   int64
	Source, Destination Party
}

func (r AttemptParties) event(kind EventKind, figures *Progress) Event {
	return Event{Kind: kind, TaskID: r.TaskID, AccountID: r.AccountID,
		Login: r.Source.Login, Host: r.Destination.Host, Port: r.Destination.Port, Progress: figures}
}

// ThrottledEvent says that the server on side asked the account to slow
// down, in its words, or that the daily byte budget of its mailbox there
// is spent (budget), and until when the account pauses.
func (r AttemptParties) ThrottledEvent(side, words string, until time.Time, budget bool, figures Progress) Event {
	e := r.event(EventAccountThrottled, &figures)
	e.blame(r.Side(side))
	e.Error = words
	why := fmt.Sprintf("the %s server asks to slow down (%q)", side, words)
	if budget {
		why = fmt.Sprintf("on the %s server, %s", side, words)
	}
	at := until.UTC().Format(time.TimeOnly)
	if time.Until(until) > 12*time.Hour {
		at = until.UTC().Format(time.DateTime)
	}
	e.Message = fmt.Sprintf("%s: %s; paused until %s UTC, then it goes on where it was", r.Source.Login, why, at)
	return e
}

// HeldEvent says that the account login, running with figures, stopped
// for its task's "pause and stop", and goes on where it was on resume.
// Out of the source's count when the attempt took one: the messages
// planned so far cover only the folders it reached.
func HeldEvent(taskID, accountID int64, login string, figures Progress) Event {
	copied := fmt.Sprintf("%d %s copied", figures.MessagesCopied, plural(int(figures.MessagesCopied), "message", "messages"))
	if figures.SourceCounted {
		copied = fmt.Sprintf("%d of %d messages copied", figures.MessagesCopied, figures.SourceMessages)
	}
	return Event{Kind: EventAccountHeld, TaskID: taskID, AccountID: accountID, Login: login, Progress: &figures,
		Message: fmt.Sprintf("%s: held after %s, %d of %d folders done; it goes on where it was when the task resumes",
			login, copied, figures.FoldersDone, figures.FoldersTotal)}
}

// party is the side ("source", "destination") of the attempt; the source
// when side names neither.
// Side is the party of side ("source" or "destination").
func (r AttemptParties) Side(side string) Party {
	if side == "destination" {
		return r.Destination
	}
	return r.Source
}

// blame points e at the side p.
func (e *Event) blame(p Party) { e.Side, e.Login, e.Host, e.Port = p.Side, p.Login, p.Host, p.Port }

// ProgressEvent is the account.progress event of an attempt whose pass stands
// at figures, in folder.
func (r AttemptParties) ProgressEvent(figures Progress, folder string) Event {
	e := r.event(EventAccountProgress, &figures)
	e.Folder = folder
	e.Message = fmt.Sprintf("%s: %d of %d messages copied (%s), folder %d of %d: %s", r.Source.Login,
		figures.MessagesCopied, figures.MessagesTotal, megabytes(figures.BytesCopied),
		figures.FoldersDone+1, figures.FoldersTotal, folder)
	return e
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// FolderEnd is how the copy engine left one folder.
type FolderEnd struct {
	Source, Destination string
	// SourceMessages are the source messages the attempt covers, and
	// DestinationMessages how many of them have their copy on the
	// destination (docs/design.md#verification).
	SourceMessages, DestinationMessages int
	// Unchanged: neither side changed since the last attempt, and the folder
	// was not opened; SourceOnly: the source alone was looked at, and the
	// destination not opened at all (a delta pass).
	Unchanged, SourceOnly bool
	// Error says why the folder could not be copied at all, and ErrorSide
	// which side said so.
	Error, ErrorSide string
	// Refusals are the messages not copied, the next attempt tries again.
	Refusals []Refusal
	// Altered are copies the destination holds unlike what was sent
	// (read back: size and header); Altered counts them, and the first
	// few are named.
	Altered         int
	AlteredExamples []AlteredCopy
	// DroppedKeywords are keywords the destination folder cannot keep.
	DroppedKeywords []string
}

// AlteredCopy is a copy the destination rewrote: its content differs
// from the message sent, though it is there.
type AlteredCopy struct {
	SourceUID, DestinationUID uint32
	Subject, What             string
}

// alteredWords says that copies were altered, with the first example.
func (f FolderEnd) alteredWords() string {
	first := f.AlteredExamples[0]
	return fmt.Sprintf("%d %s altered by the destination: there, but unlike the message sent (e.g. UID %d, %q: %s)",
		f.Altered, plural(f.Altered, "copy", "copies"), first.SourceUID, first.Subject, first.What)
}

// Refusal is a message that could not be copied: refused by the
// destination, or unreadable on the source.
type Refusal struct {
	UID          uint32 // in the source folder
	Side, Reason string
	// Subject, Date and Size name the message to a person, as the
	// source has it (the subject may be unknown, "").
	Subject string
	Date    time.Time
	Size    int64
}

// Named is the message in words: its UID, subject, date and size, as
// far as they are known.
func (r Refusal) Named() string {
	words := fmt.Sprintf("UID %d", r.UID)
	if r.Subject != "" {
		words += fmt.Sprintf(" %q", r.Subject)
	}
	var facts []string
	if !r.Date.IsZero() {
		facts = append(facts, r.Date.UTC().Format("2006-01-02"))
	}
	if r.Size > 0 {
		facts = append(facts, fmt.Sprintf("%d bytes", r.Size))
	}
	if len(facts) > 0 {
		words += " (" + strings.Join(facts, ", ") + ")"
	}
	return words
}

// Summarized says that f has nothing to tell beyond being unchanged: it
// gets no folder.done event of its own, and the account's end counts it
// (unchangedWords). An account re-checked with nothing new then logs its
// start and its end, not a line per folder.
func (f FolderEnd) Summarized() bool {
	return f.Unchanged && f.Error == "" && len(f.Refusals) == 0 && f.Altered == 0 && len(f.DroppedKeywords) == 0
}

// Missing is how many covered source messages the destination lacks.
func (f FolderEnd) Missing() int { return f.SourceMessages - f.DestinationMessages }

// Problem says what went wrong in the folder, empty when every covered
// message has its copy.
func (f FolderEnd) Problem() string {
	switch {
	case f.Error != "":
		return f.Error
	case len(f.Refusals) > 0:
		first := f.Refusals[0]
		what := "refused by the destination"
		if first.Side == "source" {
			what = "unreadable on the source"
		}
		return fmt.Sprintf("%d of %d messages not copied (%s, e.g. %s: %s)", f.Missing(), f.SourceMessages, what, first.Named(), first.Reason)
	case f.Missing() != 0:
		return fmt.Sprintf("the destination lacks %d of %d messages", f.Missing(), f.SourceMessages)
	case f.Altered > 0:
		return f.alteredWords()
	}
	return ""
}

// FolderDoneEvent is the folder.done event of f, with the pass's figures
// after it.
func (r AttemptParties) FolderDoneEvent(f FolderEnd, figures Progress) Event {
	e := r.event(EventFolderDone, &figures)
	e.Folder, e.Error = f.Source, f.Error
	switch {
	case f.Error != "":
		e.Message = fmt.Sprintf("%s: folder %s not copied: %s", r.Source.Login, f.Source, f.Error)
		e.blame(r.Side(f.ErrorSide))
	case f.Unchanged && f.SourceOnly:
		e.Message = fmt.Sprintf("%s: folder %s → %s unchanged on the source since the last complete pass (%d %s); "+
			"the destination was not opened: a verifying pass or the final pass looks at it",
			r.Source.Login, f.Source, f.Destination, f.SourceMessages, plural(int(f.SourceMessages), "message", "messages"))
	case f.Unchanged:
		e.Message = fmt.Sprintf("%s: folder %s → %s unchanged on both sides since the last attempt (%d %s)",
			r.Source.Login, f.Source, f.Destination, f.SourceMessages, plural(int(f.SourceMessages), "message", "messages"))
	default:
		e.Message = fmt.Sprintf("%s: folder %s → %s done: the destination holds %d of its %d messages",
			r.Source.Login, f.Source, f.Destination, f.DestinationMessages, f.SourceMessages)
		if len(f.Refusals) > 0 {
			first := f.Refusals[0]
			e.Error = fmt.Sprintf("%d %s refused, e.g. %s: %s", len(f.Refusals), plural(len(f.Refusals), "message", "messages"), first.Named(), first.Reason)
			e.Message += "; " + e.Error
		}
	}
	if f.Altered > 0 && f.Error == "" {
		e.Error = f.alteredWords()
		e.Message += "; " + e.Error
	}
	if len(f.DroppedKeywords) > 0 {
		e.Message += "; keywords the destination cannot keep, left out: " + strings.Join(f.DroppedKeywords, " ")
	}
	return e
}

// Pause is a server's request to slow down, or a spent daily byte budget
// (Budget), on Side, in Words, until Until.
type Pause struct {
	Side, Words string
	Until       time.Time
	Budget      bool
}

// AttemptEnd is how the copy engine left an account's attempt.
type AttemptEnd struct {
	Progress Progress // the pass's figures
	// Err is what stopped the attempt, nil when it went through; a
	// context.Canceled one is a cancel. Blamed is the side it came from,
	// when known, and Transient says that trying again later may work.
	Err       error
	Blamed    *Party
	Transient bool
	// Paused, when set, is the pause too long to wait out that ended the
	// attempt: the account waits until it ends and goes on in a new attempt.
	Paused *Pause
	// Kind and Problem classify Err for the advice that follows it (see
	// Advice); Problem is set when the connection itself failed.
	Kind    FailureKind
	Problem ServerProblem
	Folders []FolderEnd
	// Scripts is what became of the account's Sieve scripts; nil when
	// they were not moved (the source endpoint names no ManageSieve, or
	// the attempt ended before its messages did).
	Scripts *ScriptsEnd
}

// maxFolderProblems bounds how many folders an account's last error names.
const maxFolderProblems = 5

// folderProblems sums up what went wrong in single folders.
func (end AttemptEnd) folderProblems() string {
	var problems []string
	for _, f := range end.Folders {
		if text := f.Problem(); text != "" {
			problems = append(problems, fmt.Sprintf("folder %s: %s", f.Source, text))
		}
	}
	if len(problems) > maxFolderProblems {
		problems = append(problems[:maxFolderProblems], fmt.Sprintf("and %d more folders", len(problems)-maxFolderProblems))
	}
	return strings.Join(problems, "; ")
}

// unchangedWords counts the folders the attempt summarized, those judged
// from the source alone apart from those unchanged on both sides, for the
// account's end event; empty when there are none.
func (end AttemptEnd) unchangedWords() string {
	var sourceOnly, both, sourceOnlyMessages, bothMessages int
	for _, f := range end.Folders {
		switch {
		case !f.Summarized():
		case f.SourceOnly:
			sourceOnly++
			sourceOnlyMessages += f.SourceMessages
		default:
			both++
			bothMessages += f.SourceMessages
		}
	}
	var words []string
	if sourceOnly > 0 {
		words = append(words, fmt.Sprintf("%d %s (%d %s) unchanged on the source since the last complete pass; "+
			"the destination was not opened: a verifying pass or the final pass looks at it",
			sourceOnly, plural(sourceOnly, "folder", "folders"), sourceOnlyMessages, plural(sourceOnlyMessages, "message", "messages")))
	}
	if both > 0 {
		words = append(words, fmt.Sprintf("%d %s (%d %s) unchanged on both sides since the last attempt",
			both, plural(both, "folder", "folders"), bothMessages, plural(bothMessages, "message", "messages")))
	}
	return strings.Join(words, "; ")
}

// Outcome classifies an attempt's end: canceled; failed, to be retried after
// retryDelays when the fault was transient; completed with errors when a
// folder lacks messages; completed otherwise.
func (r AttemptParties) Outcome(end AttemptEnd, retryDelays []time.Duration) AttemptOutcome {
	progress := end.Progress
	outcome := AttemptOutcome{TaskID: r.TaskID, AccountID: r.AccountID, Progress: progress}
	e := r.event(EventAccountDone, &progress)
	login := r.Source.Login
	switch problems := end.folderProblems(); {
	case errors.Is(end.Err, context.Canceled):
		outcome.State, outcome.LastError = AccountCanceled, "canceled"
		e.Kind, e.Error = EventAccountFailed, "canceled"
		e.Message = fmt.Sprintf("%s: canceled after %d messages", login, progress.MessagesCopied)
	case end.Err != nil:
		outcome.State, outcome.LastError = AccountFailed, end.Err.Error()
		if end.Blamed != nil {
			e.blame(*end.Blamed)
			if advice := Advice(end.Kind, end.Problem, *end.Blamed); advice != "" {
				outcome.LastError = endSentence(outcome.LastError) + " What to do: " + advice
			}
		}
		e.Kind, e.Error = EventAccountFailed, end.Err.Error()
		e.Message = fmt.Sprintf("%s: failed: %s", login, outcome.LastError)
		if end.Blamed != nil && (end.Kind == FailureAuth || end.Kind == FailureToken) {
			outcome.LoginRefused = end.Blamed.Side
		}
		switch {
		case end.Paused != nil:
			// The state and event above stand only if it cannot wait (a
			// cancel came meanwhile). Parked, it logs the pause with the
			// figures it stopped at.
			p := end.Paused
			outcome.ResumeAt, outcome.LastError = p.Until, p.Words
			parked := r.ThrottledEvent(p.Side, p.Words, p.Until, p.Budget, progress)
			outcome.ParkedEvent = &parked
		case end.Transient:
			outcome.RetryDelays = retryDelays
		}
	case problems != "":
		outcome.State, outcome.LastError = AccountCompletedWithErrors, problems
		e.Error = problems
		e.Message = fmt.Sprintf("%s: done with errors: %s", login, problems)
	default:
		outcome.State = AccountCompleted
		e.Message = fmt.Sprintf("%s: done: %d %s copied, %d already there or left out",
			login, progress.MessagesCopied, plural(int(progress.MessagesCopied), "message", "messages"), progress.MessagesSkipped)
	}
	if unchanged := end.unchangedWords(); unchanged != "" && end.Err == nil {
		e.Message += "; " + unchanged
	}
	outcome.Events = []Event{e}
	if end.Scripts != nil {
		outcome.Scripts = end.Scripts
		scripts := r.event(EventScriptsDone, nil)
		scripts.Message = login + ": Sieve scripts: " + end.Scripts.Summary()
		scripts.Error = end.Scripts.Problem()
		outcome.Events = []Event{scripts, e}
	}
	return outcome
}

// NotStartedOutcome fails the account of an attempt that could not start, for
// instance because its password cannot be opened.
func (run StartedAttempt) NotStartedOutcome(err error) AttemptOutcome {
	a := run.Account
	return AttemptOutcome{TaskID: run.Task.ID, AccountID: a.ID, State: AccountFailed, LastError: err.Error(),
		Events: []Event{{Kind: EventAccountFailed, TaskID: run.Task.ID, AccountID: a.ID, Login: a.SourceLogin,
			Error: err.Error(), Message: a.SourceLogin + ": could not start: " + err.Error()}}}
}

// CanceledAttemptOutcome ends canceled the account of a canceled task whose
// process died while it ran.
func CanceledAttemptOutcome(taskID, accountID, generation int64, login string) AttemptOutcome {
	return AttemptOutcome{TaskID: taskID, AccountID: accountID, Generation: generation,
		State: AccountCanceled, LastError: "canceled",
		Events: []Event{{Kind: EventAccountFailed, TaskID: taskID, AccountID: accountID,
			Login: login, Error: "canceled", Message: login + ": canceled"}}}
}

// RequeuedEvent says that an account whose process died is queued again.
func RequeuedEvent(taskID, accountID int64, login string) Event {
	return Event{Kind: EventError, TaskID: taskID, AccountID: accountID, Login: login, Error: "worker lost",
		Message: login + ": the process migrating it stopped answering; queued again, it resumes where it stopped"}
}

// RetryEvent turns the event of an attempt that failed into the error event
// that says when its retry, the n-th of retries, comes.
func RetryEvent(failed Event, n, retries int, delay time.Duration) Event {
	failed.Kind = EventError
	failed.Message = fmt.Sprintf("%s; retry %d of %d in %s", failed.Message, n, retries, delay)
	return failed
}

// PassStartedEvent opens pass number pass over accounts of a task.
func PassStartedEvent(taskID int64, pass int, accounts int64, by PassStarter) Event {
	what := map[PassStarter]string{StartedBySchedule: " (scheduled delta pass)", StartedAsFinal: " (the final pass)"}[by]
	return Event{Kind: EventRunStarted, TaskID: taskID,
		Message: fmt.Sprintf("pass %d started%s: %d %s", pass, what, accounts, plural(int(accounts), "account", "accounts"))}
}

// AccountPassStartedEvent opens a pass of one account run again.
func AccountPassStartedEvent(taskID, accountID int64, pass int, login string) Event {
	return Event{Kind: EventRunStarted, TaskID: taskID, AccountID: accountID, Login: login,
		Message: fmt.Sprintf("pass %d started: account %s again", pass, login)}
}

// PassJoinedEvent says that accounts joined the pass under way;
// login names the one account of a retry, empty for a selection.
func PassJoinedEvent(taskID, accountID int64, pass int, accounts int64, login string) Event {
	e := Event{Kind: EventRunJoined, TaskID: taskID, AccountID: accountID, Login: login}
	if login != "" {
		e.Message = fmt.Sprintf("pass %d: %s joins the pass under way", pass, login)
	} else {
		e.Message = fmt.Sprintf("pass %d: %d more %s the pass under way", pass, accounts, plural(int(accounts), "account joins", "accounts join"))
	}
	return e
}

// AccountsCanceledEvent says that some accounts of a pass were canceled:
// waiting ones ended at once, running ones stop.
func AccountsCanceledEvent(taskID int64, waiting, running int64) Event {
	var parts []string
	if waiting > 0 {
		parts = append(parts, fmt.Sprintf("%d not started, canceled", waiting))
	}
	if running > 0 {
		parts = append(parts, fmt.Sprintf("%d running, stopping", running))
	}
	n := waiting + running
	return Event{Kind: EventAccountsCanceled, TaskID: taskID,
		Message: fmt.Sprintf("%d %s canceled (%s); the others go on", n, plural(int(n), "account", "accounts"), strings.Join(parts, ", "))}
}

// LostTestOutcome fails on both sides the connection test that a dead
// process was running, so that the task leaves testing.
func LostTestOutcome(job AccountTestJob) AccountTestOutcome {
	const lost = "not tested: the process testing it stopped"
	return AccountTestOutcome{TaskID: job.TaskID, AccountID: job.AccountID, Generation: job.Generation,
		SourceError: lost, DestinationError: lost,
		Events: []Event{{Kind: EventTestFailed, TaskID: job.TaskID, AccountID: job.AccountID,
			Error: lost, Message: "connection test interrupted: the process testing it stopped; test again"}}}
}

// TestCanceledEvent ends a canceled connection test, saying how far it
// got.
func TestCanceledEvent(taskID int64, total, done, failed int64) Event {
	return Event{Kind: EventTestCanceled, TaskID: taskID,
		Message: fmt.Sprintf("connection test canceled: %d of %d accounts tested, %d failed", done, total, failed)}
}

// endSentence ends text with a full stop, unless a server's words end it
// already ("Authentication failed."): advice after it is a new sentence.
func endSentence(text string) string {
	if strings.HasSuffix(text, ".") || strings.HasSuffix(text, "!") || strings.HasSuffix(text, "?") {
		return text
	}
	return text + "."
}
