package migration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// PassStarter says what started a pass.
type PassStarter string

// What starts passes.
const (
	StartedByHand     PassStarter = "manual"   // a person, or a client of the API
	StartedBySchedule PassStarter = "schedule" // a delta pass of the schedule
	StartedAsFinal    PassStarter = "final"    // the final pass
	// StartedToVerify: a person's pass that looks at both servers for
	// every account, as the final pass does, rather than trusting an
	// unchanged source (docs/design.md#source-only-deltas).
	StartedToVerify PassStarter = "verify"
)

// PassStarters are every PassStarter, in the order the API lists them.
var PassStarters = []PassStarter{StartedByHand, StartedBySchedule, StartedAsFinal, StartedToVerify}

// VerifyingPassStarters start the passes that look at both servers of
// every account: an account whose source is unchanged since its last
// complete pass is checked on the destination too.
var VerifyingPassStarters = []PassStarter{StartedAsFinal, StartedToVerify}

// ByPerson reports whether a person (or a client of the API) asked for
// the pass, rather than a schedule: it runs every selected account, the
// ones whose login was refused before included.
func (by PassStarter) ByPerson() bool { return by == StartedByHand || by == StartedToVerify }

// Stage is where a task is in its cut-over (docs/design.md#schedules, its lifecycle).
type Stage string

// The stages of a task's cut-over, in the order a cut-over passes them.
const (
	StagePlanned    Stage = "planned"     // no pass yet
	StageCopying    Stage = "copying"     // a pass is under way
	StageInSync     Stage = "in_sync"     // the last pass ended with every account completed
	StageOutOfSync  Stage = "out_of_sync" // the last pass ended otherwise: accounts failed, canceled or with errors
	StageFinalPass  Stage = "final_pass"  // the final pass is under way
	StageVerified   Stage = "verified"    // the final pass ended with every message found on the destination
	StageUnverified Stage = "unverified"  // the final pass ended with accounts failed, incomplete or canceled
)

// Stages are every Stage, in the order the API lists them.
var Stages = []Stage{StagePlanned, StageCopying, StageInSync, StageOutOfSync, StageFinalPass, StageVerified, StageUnverified}

// Lifecycle is a task's cut-over told in one stage and in words.
type Lifecycle struct {
	Stage Stage
	// Words say it for people, times in the schedule's zone (the
	// server's), e.g. "in sync: pass 3 ended Sat 28 Nov 14:02 CET
	// (completed); next pass Sat 28 Nov 18:00 CET".
	Words    string
	TimeZone string
	// LastPass is the newest pass, nil before the first.
	LastPass *Pass
	// NextPassAt is when the schedule's next pass is due: a delta pass,
	// or the final pass when it comes first; nil with none.
	NextPassAt *time.Time
	FinalAt    *time.Time // when the final pass is (or was) due
	PausedAt   *time.Time // when the task was paused; nil when not
}

// LifecycleOf tells the cut-over of a task from its passes (first first),
// its schedule (nil without one) and when it was paused, in zone unless
// the schedule has its own.
func LifecycleOf(passes []Pass, schedule *Schedule, pausedAt *time.Time, zone *time.Location) Lifecycle {
	l := Lifecycle{PausedAt: pausedAt, TimeZone: zone.String()}
	loc := zone
	finalPass := 0
	finalDue, finalNext := false, false // the final pass is still to come; it is the next pass
	if schedule != nil {
		loc, l.TimeZone = schedule.Location(), schedule.TimeZone
		l.NextPassAt, l.FinalAt, finalPass = schedule.NextPassAt, schedule.FinalAt, schedule.FinalPass
		finalDue = schedule.FinalAt != nil && schedule.FinalPass == 0
		if finalDue && (l.NextPassAt == nil || schedule.FinalAt.Before(*l.NextPassAt)) {
			l.NextPassAt, finalNext = schedule.FinalAt, true
		}
	}
	var words []string
	if len(passes) == 0 {
		l.Stage = StagePlanned
		words = append(words, "planned: no pass yet")
	} else {
		last := passes[len(passes)-1]
		l.LastPass = &last
		words = append(words, passWords(&l, last, finalPass, loc))
	}
	switch {
	case finalNext:
		words = append(words, "final pass "+WhenWords(*schedule.FinalAt, loc))
	case l.NextPassAt != nil:
		words = append(words, "next pass "+WhenWords(*l.NextPassAt, loc))
		if finalDue {
			words = append(words, "final pass "+WhenWords(*schedule.FinalAt, loc))
		}
	case l.Stage == StageInSync || l.Stage == StageOutOfSync:
		words = append(words, "no pass scheduled")
	}
	if pausedAt != nil {
		words = append([]string{"paused since " + WhenWords(*pausedAt, loc) + ", no pass starts until it is resumed"}, words...)
	}
	l.Words = strings.Join(words, "; ")
	return l
}

// passWords sets l's stage from the last pass and says it.
func passWords(l *Lifecycle, last Pass, finalPass int, loc *time.Location) string {
	final := finalPass != 0 && last.Number == finalPass
	if last.EndedAt == nil {
		l.Stage = StageCopying
		if final {
			l.Stage = StageFinalPass
			return fmt.Sprintf("final pass: pass %d began %s", last.Number, WhenWords(last.StartedAt, loc))
		}
		return fmt.Sprintf("copying: pass %d began %s", last.Number, WhenWords(last.StartedAt, loc))
	}
	ended := fmt.Sprintf("pass %d ended %s (%s)", last.Number, WhenWords(*last.EndedAt, loc), stateWords(last))
	switch {
	case final && last.State == TaskCompleted:
		l.Stage = StageVerified
		// The accounts it verified, by number: those a final pass leaves
		// out (refused logins) are not among them.
		n := last.Figures.Completed
		return fmt.Sprintf("verified: final %s, every message of its %d %s found on the destination", ended, n, plural(n, "account", "accounts"))
	case final:
		l.Stage = StageUnverified
		return "not verified: final " + ended + "; mend the accounts and run the final pass again"
	case last.State != TaskCompleted:
		// In sync means every account's mail is there: a pass with an
		// account failed, canceled or with messages refused is not.
		l.Stage = StageOutOfSync
		return "out of sync: " + ended
	}
	l.Stage = StageInSync
	return "in sync: " + ended
}

// stateWords says how a pass ended, with its accounts that did not
// complete.
func stateWords(p Pass) string {
	words := strings.ReplaceAll(string(p.State), "_", " ")
	var not []string
	for _, n := range []struct {
		count int
		what  string
	}{
		{p.Figures.CompletedWithErrors, "with errors"}, {p.Figures.Failed, "failed"}, {p.Figures.Canceled, "canceled"},
	} {
		if n.count > 0 {
			not = append(not, fmt.Sprintf("%d %s", n.count, n.what))
		}
	}
	if len(not) > 0 && p.State != TaskCanceled {
		words += ": " + strings.Join(not, ", ")
	}
	return words
}

// Lifecycle returns where a task is in its cut-over. It reads no figure
// of the task's accounts but its passes': a page shows it beside the task.
func (s *Service) Lifecycle(ctx context.Context, taskID int64) (Lifecycle, error) {
	pausedAt, err := s.store.TaskPausedAt(ctx, taskID)
	if err != nil {
		return Lifecycle{}, err
	}
	passes, err := s.store.TaskPasses(ctx, taskID)
	if err != nil {
		return Lifecycle{}, err
	}
	var schedule *Schedule
	switch sch, err := s.store.ScheduleGet(ctx, taskID); {
	case err == nil:
		schedule = &sch
	case !errors.Is(err, ErrNoSchedule):
		return Lifecycle{}, err
	}
	return LifecycleOf(passes, schedule, pausedAt, s.zone()), nil
}

// ErrFinalWithoutAccounts refuses a final pass of a task without
// accounts: it would verify nothing, and an account imported later would
// start it at once, with no delta pass before it.
var ErrFinalWithoutAccounts = conflict("the task has no accounts: a final pass would verify nothing")

// ErrFinalBeforeAPass refuses a final pass before any account completed
// a pass: the final pass copies what the last delta pass missed and
// verifies it, which needs a delta pass to have been.
var ErrFinalBeforeAPass = conflict("no account of the task has completed a pass yet: run a pass first; " +
	"the final pass copies what the last one missed and verifies every folder")

// CompletedPassStates are the states in which an account's pass counts
// as completed for FinalPassRefusal: its mail was copied, all or with
// some messages refused.
var CompletedPassStates = []AccountState{AccountCompleted, AccountCompletedWithErrors}

// FinalPassRefusal says why a final pass may not be asked for, or begin,
// on a task of accounts accounts, of which completed completed a pass
// before; nil when it may. While a pass is under way (passUnderWay) the
// final pass may be asked for: it begins after that pass, which may
// complete accounts, and is checked again then.
func FinalPassRefusal(accounts, completed int64, passUnderWay bool) error {
	switch {
	case accounts == 0:
		return ErrFinalWithoutAccounts
	case completed == 0 && !passUnderWay:
		return ErrFinalBeforeAPass
	}
	return nil
}

// FinalEndEvent is the event that tells how the final pass ended:
// final.verified when every account completed, final.unverified else.
func FinalEndEvent(taskID int64, pass int, state TaskState, accounts AccountCounts) Event {
	if state == TaskCompleted {
		return Event{Kind: EventFinalVerified, TaskID: taskID,
			Message: fmt.Sprintf("final pass %d verified: every message of the %d %s found on the destination",
				pass, accounts.Total, plural(int(accounts.Total), "account", "accounts"))}
	}
	// The accounts it left out (a refused login) count too: their mail
	// is not on the destination.
	return Event{Kind: EventFinalUnverified, TaskID: taskID,
		Message: fmt.Sprintf("final pass %d not verified: it ended %s", pass, strings.ReplaceAll(string(state), "_", " ")) + accountOutcomes(accounts)}
}
