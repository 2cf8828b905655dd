package migration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Schedule is a task's cut-over in time (docs/design.md#schedules): delta
// passes that keep the destination fresh, every so long or at clock
// times, until an end; and the final pass, at a set time or on demand.
type Schedule struct {
	// Every spaces the delta passes, in whole minutes; 0 with At, or with
	// a final pass alone.
	Every time.Duration
	// At are the clock times ("06:00") at which delta passes begin each
	// day, in TimeZone.
	At []string
	// TimeZone is the IANA name of the zone At is read in, and the
	// schedule's times are told in: the server's unless given.
	TimeZone string
	// Until, when set, is the end of the delta passes: none begins after.
	Until *time.Time
	// FinalAt, when set, is when the final pass begins (after the pass
	// under way, if one is).
	FinalAt *time.Time

	// Set by the service, not the client:

	// NextPassAt is when the next delta pass is due; nil when the
	// schedule has none left.
	NextPassAt *time.Time
	// FinalPass is the number of the pass that began as final; 0 before.
	FinalPass int
}

// The bounds of a schedule.
const (
	MinScheduleEvery = time.Minute
	MaxScheduleEvery = 365 * 24 * time.Hour
	MaxScheduleTimes = 24
)

// ScheduleEvery is minutes as a Schedule's Every; a count past
// MaxScheduleEvery stays past it (no overflow), for Normalize to refuse.
func ScheduleEvery(minutes int) time.Duration {
	if minutes > int(MaxScheduleEvery/time.Minute) {
		return MaxScheduleEvery + time.Minute
	}
	return time.Duration(minutes) * time.Minute
}

// ErrNoSchedule answers a read or removal of a task's schedule when the
// task has none.
var ErrNoSchedule = notFound("task has no schedule")

// ErrTaskPaused refuses a pass of a paused task until it is resumed.
var ErrTaskPaused = conflict("task is paused")

// ErrFinalPassRunning refuses "final pass now" while the final pass runs.
var ErrFinalPassRunning = conflict("the final pass is running")

// ErrTaskNotPaused refuses to resume a task that is not paused.
var ErrTaskNotPaused = conflict("task is not paused")

// Normalize checks a schedule a client gave at now, sorts its clock
// times, fills in the zone (zone, the server's, unless named), and sets
// the first delta pass due.
func (s *Schedule) Normalize(now time.Time, zone *time.Location) error {
	if s.TimeZone == "" {
		s.TimeZone = zone.String()
	}
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil {
		return invalid("time_zone", "%q is not a time zone (an IANA name such as Europe/Berlin)", s.TimeZone)
	}
	switch {
	case s.Every < 0:
		return invalid("every_minutes", "must be 0 or more")
	case s.Every > 0 && s.Every < MinScheduleEvery:
		return invalid("every_minutes", "must be at least 1")
	case s.Every > MaxScheduleEvery:
		return invalid("every_minutes", "must be at most %d (a year)", int(MaxScheduleEvery/time.Minute))
	case s.Every%time.Minute != 0:
		return invalid("every_minutes", "must be whole minutes")
	case s.Every > 0 && len(s.At) > 0:
		return invalid("at", "must not be given with every_minutes: delta passes come every so often or at clock times, not both")
	case len(s.At) > MaxScheduleTimes:
		return invalid("at", "at most %d clock times", MaxScheduleTimes)
	}
	for i, at := range s.At {
		clock, err := time.Parse("15:04", strings.TrimSpace(at))
		if err != nil {
			return invalid("at", "%q is not a clock time such as 06:00", at)
		}
		s.At[i] = clock.Format("15:04")
	}
	slices.Sort(s.At)
	s.At = slices.Compact(s.At)
	delta := s.Every > 0 || len(s.At) > 0
	switch {
	case !delta && s.FinalAt == nil:
		return invalid("every_minutes", "or at (delta passes), or a final_at, must be given: a schedule without them starts nothing")
	case !delta && s.Until != nil:
		return invalid("until", "ends delta passes: give every_minutes or at too")
	case s.Until != nil && !s.Until.After(now):
		return invalid("until", "is in the past")
	case s.FinalAt != nil && !s.FinalAt.After(now):
		return invalid("final_at", "is in the past; start the final pass now instead")
	}
	s.NextPassAt = nil
	if delta {
		s.NextPassAt = s.nextDelta(now, now, loc)
		// None before the final pass is harmless; none before until is
		// a mistake.
		if s.NextPassAt == nil && (s.FinalAt == nil || s.Until != nil && s.Until.Before(*s.FinalAt)) {
			return invalid("until", "ends the schedule before its first delta pass")
		}
	}
	return nil
}

// Location is the schedule's zone (UTC if it cannot be loaded, which a
// normalized schedule never has).
func (s Schedule) Location() *time.Location {
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// NextDelta is the delta pass due after the one of slot, begun at now:
// the first slot after now (a pass that waited skips the slots it
// missed), or nil when none is left before Until or the final pass.
func (s Schedule) NextDelta(slot, now time.Time) *time.Time {
	return s.nextDelta(slot, now, s.Location())
}

func (s Schedule) nextDelta(slot, now time.Time, loc *time.Location) *time.Time {
	var next time.Time
	switch {
	case s.Every > 0:
		next = slot.Add(s.Every)
		if !next.After(now) {
			next = slot.Add(s.Every * (now.Sub(slot)/s.Every + 1))
		}
	case len(s.At) > 0:
		next = nextClockTime(s.At, now, loc)
	default:
		return nil
	}
	if s.Until != nil && next.After(*s.Until) {
		return nil
	}
	if s.FinalAt != nil && s.FinalPass == 0 && !next.Before(*s.FinalAt) {
		return nil // the final pass takes over
	}
	return &next
}

// nextClockTime is the first of the daily clock times (sorted "15:04")
// after now in loc.
func nextClockTime(times []string, now time.Time, loc *time.Location) time.Time {
	local := now.In(loc)
	for day := 0; day <= 2; day++ {
		for _, at := range times {
			clock, _ := time.Parse("15:04", at)
			t := time.Date(local.Year(), local.Month(), local.Day()+day, clock.Hour(), clock.Minute(), 0, 0, loc)
			if t.After(now) {
				return t
			}
		}
	}
	return now.Add(24 * time.Hour) // unreachable with at least one time
}

// ScheduleStep is what a schedule asks for at a moment.
type ScheduleStep int

// The steps of a schedule.
const (
	StepNone  ScheduleStep = iota // nothing is due
	StepDelta                     // a delta pass is due
	StepFinal                     // the final pass is due
)

// Step says what is due at now: the final pass before a delta pass.
func (s Schedule) Step(now time.Time) ScheduleStep {
	switch {
	case s.FinalAt != nil && s.FinalPass == 0 && !now.Before(*s.FinalAt):
		return StepFinal
	case s.NextPassAt != nil && !now.Before(*s.NextPassAt):
		return StepDelta
	}
	return StepNone
}

// Describe says the schedule in words, times in its zone, e.g. "every 6
// hours until Sat 28 Nov 18:00 CET; final pass Sat 28 Nov 22:00 CET".
func (s Schedule) Describe() string {
	loc := s.Location()
	var parts []string
	switch {
	case s.Every > 0:
		parts = append(parts, "delta passes every "+everyWords(s.Every))
	case len(s.At) > 0:
		parts = append(parts, "delta passes daily at "+strings.Join(s.At, ", ")+" "+s.TimeZone)
	}
	if s.Until != nil && len(parts) > 0 {
		parts[0] += " until " + WhenWords(*s.Until, loc)
	}
	if s.FinalAt != nil {
		parts = append(parts, "final pass "+WhenWords(*s.FinalAt, loc))
	}
	return strings.Join(parts, "; ")
}

func everyWords(d time.Duration) string {
	if d%time.Hour == 0 {
		h := int(d / time.Hour)
		return fmt.Sprintf("%d %s", h, plural(h, "hour", "hours"))
	}
	m := int(d / time.Minute)
	return fmt.Sprintf("%d %s", m, plural(m, "minute", "minutes"))
}

// WhenWords tells a moment in loc the way the schedule's words do.
func WhenWords(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2 Jan 15:04 MST")
}

// ServerZone is the zone of this machine under its IANA name: $TZ, or
// the zone /etc/localtime names; UTC if neither says. It is read once.
var ServerZone = sync.OnceValue(serverZone)

func serverZone() *time.Location {
	name := os.Getenv("TZ")
	if name == "" {
		if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
			if _, after, ok := strings.Cut(target, "zoneinfo/"); ok {
				name = after
			}
		}
	}
	if loc, err := time.LoadLocation(name); err == nil && name != "" && name != "Local" {
		return loc
	}
	return time.UTC
}

// ScheduleStore keeps schedules and starts the passes they make due.
type ScheduleStore interface {
	// ScheduleSet gives a task its schedule in place of the one it had
	// (ErrNotFound for a missing task).
	ScheduleSet(ctx context.Context, taskID int64, s Schedule) error
	// ScheduleGet returns a task's schedule: ErrNoSchedule without one.
	ScheduleGet(ctx context.Context, taskID int64) (Schedule, error)
	// ScheduleRemove drops a task's schedule: no pass is started for it
	// after (ErrNoSchedule without one).
	ScheduleRemove(ctx context.Context, taskID int64) error
	// SchedulesStart starts the passes due at now of tasks that are
	// neither running nor paused, and moves their schedules on, and says
	// how many it started. Any number of processes may call it at once:
	// each slot starts one pass.
	SchedulesStart(ctx context.Context, now time.Time) (int, error)
	// TaskFinalPass makes the task's final pass due at now; it starts at
	// the next SchedulesStart, after the pass under way if one is.
	TaskFinalPass(ctx context.Context, taskID int64, now time.Time, zone *time.Location) error
	// TaskPause stops new passes of the task, and with hold holds the
	// pass under way: ErrTaskPaused if it is paused already.
	TaskPause(ctx context.Context, taskID int64, hold bool) error
	// TaskResume lets passes start again: ErrTaskNotPaused if it was not.
	TaskResume(ctx context.Context, taskID int64) error
	// TaskPausedAt says since when a task is paused: nil when it is not,
	// ErrNotFound for a missing task.
	TaskPausedAt(ctx context.Context, taskID int64) (*time.Time, error)
}

// SetSchedule validates s at the service's now and gives it to the task.
func (s *Service) SetSchedule(ctx context.Context, taskID int64, schedule Schedule) (Schedule, error) {
	if err := schedule.Normalize(s.now(), s.zone()); err != nil {
		return Schedule{}, err
	}
	if err := s.store.ScheduleSet(ctx, taskID, schedule); err != nil {
		return Schedule{}, err
	}
	return s.store.ScheduleGet(ctx, taskID)
}

// Schedule returns a task's schedule: ErrNoSchedule without one.
func (s *Service) Schedule(ctx context.Context, taskID int64) (Schedule, error) {
	return s.store.ScheduleGet(ctx, taskID)
}

// RemoveSchedule drops a task's schedule; a pass under way goes on.
func (s *Service) RemoveSchedule(ctx context.Context, taskID int64) error {
	return s.store.ScheduleRemove(ctx, taskID)
}

// FinalPassNow makes the task's final pass due now: it begins within
// moments, or when the pass under way ends. Delta passes stop.
func (s *Service) FinalPassNow(ctx context.Context, taskID int64) error {
	return s.store.TaskFinalPass(ctx, taskID, s.now(), s.zone())
}

// PauseTask freezes a task: no pass starts, by hand or by schedule, until
// it is resumed. With stop, the pass under way is held: its running
// accounts stop cleanly between messages and wait, none starts, and on
// resume they go on where they were (nothing is canceled, nothing failed);
// without, it goes on to its end. A connection test is no pass: it goes
// on either way.
func (s *Service) PauseTask(ctx context.Context, taskID int64, stop bool) error {
	return s.store.TaskPause(ctx, taskID, stop)
}

// ResumeTask lets a paused task's passes start again: a scheduled pass
// missed meanwhile starts at once.
func (s *Service) ResumeTask(ctx context.Context, taskID int64) error {
	return s.store.TaskResume(ctx, taskID)
}

func (s *Service) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

func (s *Service) zone() *time.Location {
	if s.Zone != nil {
		return s.Zone
	}
	return ServerZone()
}
