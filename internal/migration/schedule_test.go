package migration

import (
	"strings"
	"testing"
	"time"
)

func TestScheduleNormalize(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 17, 30, 0, 0, berlin)
	at := func(h, m int) *time.Time { v := time.Date(2026, 11, 27, h, m, 0, 0, berlin); return &v }
	tomorrow := func(h, m int) *time.Time { v := time.Date(2026, 11, 28, h, m, 0, 0, berlin); return &v }
	for _, tc := range []struct {
		name     string
		schedule Schedule
		next     *time.Time // the first delta pass
		err      string
	}{
		{"every 6 hours", Schedule{Every: 6 * time.Hour}, at(23, 30), ""},
		{"clock times, sorted, the next today", Schedule{At: []string{"22:00", "06:00", "6:00"}}, at(22, 0), ""},
		{"clock times, tomorrow", Schedule{At: []string{"06:00"}}, tomorrow(6, 0), ""},
		{"a final pass alone", Schedule{FinalAt: tomorrow(22, 0)}, nil, ""},
		{"the final pass comes before the first delta pass", Schedule{Every: 6 * time.Hour, FinalAt: at(20, 0)}, nil, ""},
		{"until before the first delta pass", Schedule{Every: 6 * time.Hour, Until: at(20, 0)}, nil, "until ends the schedule before its first delta pass"},
		{"both kinds", Schedule{Every: time.Hour, At: []string{"06:00"}}, nil, "at must not be given with every_minutes: delta passes come every so often or at clock times, not both"},
		{"nothing", Schedule{}, nil, "every_minutes or at (delta passes), or a final_at, must be given: a schedule without them starts nothing"},
		{"until without passes", Schedule{FinalAt: tomorrow(1, 0), Until: tomorrow(0, 0)}, nil, "until ends delta passes: give every_minutes or at too"},
		{"until past", Schedule{Every: time.Hour, Until: at(17, 0)}, nil, "until is in the past"},
		{"final past", Schedule{FinalAt: at(17, 0)}, nil, "final_at is in the past; start the final pass now instead"},
		{"bad clock", Schedule{At: []string{"7pm"}}, nil, `at "7pm" is not a clock time such as 06:00`},
		{"bad zone", Schedule{Every: time.Hour, TimeZone: "Mars/Olympus"}, nil, `time_zone "Mars/Olympus" is not a time zone (an IANA name such as Europe/Berlin)`},
		{"seconds", Schedule{Every: 90 * time.Second}, nil, "every_minutes must be whole minutes"},
		{"past a year", Schedule{Every: ScheduleEvery(1 << 40)}, nil, "every_minutes must be at most 525600 (a year)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.schedule
			err := s.Normalize(now, berlin)
			switch {
			case tc.err != "":
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case (s.NextPassAt == nil) != (tc.next == nil) || s.NextPassAt != nil && !s.NextPassAt.Equal(*tc.next):
				t.Errorf("first delta pass %v, want %v", s.NextPassAt, tc.next)
			case s.TimeZone != "Europe/Berlin":
				t.Errorf("zone %q, want the server's", s.TimeZone)
			}
		})
	}
}

// A pass that waited past its slots is followed by the first slot after
// it, on the schedule's grid; clock times follow the zone over a change
// of summer time.
func TestScheduleNextDelta(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	every := Schedule{Every: time.Hour, TimeZone: "UTC"}
	if next := every.NextDelta(start, start.Add(10*time.Minute)); !next.Equal(start.Add(time.Hour)) {
		t.Errorf("after an on-time pass: %v", next)
	}
	if next := every.NextDelta(start, start.Add(150*time.Minute)); !next.Equal(start.Add(3 * time.Hour)) {
		t.Errorf("after a pass that waited 2.5 h: %v, want the slot after it", next)
	}
	until := start.Add(90 * time.Minute)
	every.Until = &until
	if next := every.NextDelta(start.Add(time.Hour), start.Add(time.Hour)); next != nil {
		t.Errorf("past until: %v, want none", next)
	}

	berlin, _ := time.LoadLocation("Europe/Berlin")
	daily := Schedule{At: []string{"06:00"}, TimeZone: "Europe/Berlin"}
	// Summer time ends on 25 October 2026 at 03:00.
	before := time.Date(2026, 10, 24, 6, 0, 0, 0, berlin)
	next := daily.NextDelta(before, before.Add(time.Minute))
	if want := time.Date(2026, 10, 25, 6, 0, 0, 0, berlin); !next.Equal(want) || next.Sub(before) != 25*time.Hour {
		t.Errorf("over the change of time: %v, want %v, 25 hours later", next, want)
	}
}

func TestScheduleStep(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	for _, tc := range []struct {
		name string
		s    Schedule
		want ScheduleStep
	}{
		{"nothing due", Schedule{NextPassAt: &future, FinalAt: &future}, StepNone},
		{"a delta pass due", Schedule{NextPassAt: &past}, StepDelta},
		{"the final pass first", Schedule{NextPassAt: &past, FinalAt: &past}, StepFinal},
		{"the final pass began", Schedule{FinalAt: &past, FinalPass: 4}, StepNone},
	} {
		if got := tc.s.Step(now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func withFigures(p Pass, figures PassFigures) Pass {
	p.Figures = figures
	return p
}

func TestLifecycleOf(t *testing.T) {
	utc := time.UTC
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, utc)
	ended := func(n int, state TaskState, by PassStarter) Pass {
		end := t0.Add(time.Duration(n) * time.Hour)
		return Pass{Number: n, StartedBy: by, StartedAt: end.Add(-time.Minute), EndedAt: &end, State: state}
	}
	next, final := t0.Add(6*time.Hour), t0.Add(10*time.Hour)
	running := Pass{Number: 3, StartedBy: StartedAsFinal, StartedAt: t0}
	paused := t0.Add(time.Minute)
	for _, tc := range []struct {
		name     string
		passes   []Pass
		schedule *Schedule
		paused   *time.Time
		stage    Stage
		words    string
	}{
		{"new", nil, nil, nil, StagePlanned, "planned: no pass yet"},
		{"scheduled", []Pass{ended(1, TaskCompleted, StartedByHand)},
			&Schedule{TimeZone: "UTC", NextPassAt: &next, FinalAt: &final}, nil, StageInSync,
			"in sync: pass 1 ended Fri 27 Nov 13:00 UTC (completed); next pass Fri 27 Nov 18:00 UTC; final pass Fri 27 Nov 22:00 UTC"},
		{"failed", []Pass{ended(1, TaskFailed, StartedByHand)}, nil, nil, StageOutOfSync,
			"out of sync: pass 1 ended Fri 27 Nov 13:00 UTC (failed); no pass scheduled"},
		// A pass with 99 failed or canceled accounts of 2 000 is no sync.
		{"some failed", []Pass{withFigures(ended(1, TaskCompletedWithErrors, StartedByHand), PassFigures{Completed: 1901, Failed: 94, Canceled: 5})},
			nil, nil, StageOutOfSync,
			"out of sync: pass 1 ended Fri 27 Nov 13:00 UTC (completed with errors: 94 failed, 5 canceled); no pass scheduled"},
		{"final running", []Pass{ended(2, TaskCompleted, StartedBySchedule), running},
			&Schedule{TimeZone: "UTC", FinalAt: &t0, FinalPass: 3}, nil, StageFinalPass,
			"final pass: pass 3 began Fri 27 Nov 12:00 UTC"},
		// It says how many accounts it verified: the refused ones it left
		// out are not among them.
		{"verified", []Pass{withFigures(ended(3, TaskCompleted, StartedAsFinal), PassFigures{Completed: 295})},
			&Schedule{TimeZone: "UTC", FinalAt: &t0, FinalPass: 3}, nil, StageVerified,
			"verified: final pass 3 ended Fri 27 Nov 15:00 UTC (completed), every message of its 295 accounts found on the destination"},
		{"not verified", []Pass{ended(3, TaskCompletedWithErrors, StartedAsFinal)},
			&Schedule{TimeZone: "UTC", FinalAt: &t0, FinalPass: 3}, nil, StageUnverified,
			"not verified: final pass 3 ended Fri 27 Nov 15:00 UTC (completed with errors); mend the accounts and run the final pass again"},
		{"paused", []Pass{ended(1, TaskCompleted, StartedByHand)}, nil, &paused, StageInSync,
			"paused since Fri 27 Nov 12:01 UTC, no pass starts until it is resumed; in sync: pass 1 ended Fri 27 Nov 13:00 UTC (completed); no pass scheduled"},
	} {
		l := LifecycleOf(tc.passes, tc.schedule, tc.paused, utc)
		if l.Stage != tc.stage || l.Words != tc.words {
			t.Errorf("%s: %s %q,\nwant %s %q", tc.name, l.Stage, l.Words, tc.stage, tc.words)
		}
	}
	if l := LifecycleOf(nil, &Schedule{TimeZone: "UTC", NextPassAt: &next, FinalAt: &final}, nil, utc); !strings.Contains(l.Words, "next pass") || !l.NextPassAt.Equal(next) {
		t.Errorf("planned with a schedule: %q %v", l.Words, l.NextPassAt)
	}
}
