package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// tasksSchedule shows a task's schedule and where its cut-over stands, sets
// it (--every, --at, --until, --final-at), or removes it (--remove).
func tasksSchedule(ctx context.Context, s *session, args []string) error {
	every := s.flags.Duration("every", 0, "a delta pass every so long, in whole minutes (e.g. 6h, 90m)")
	at := s.flags.String("at", "", "delta passes daily at these clock times, e.g. 06:00,18:00")
	zone := s.flags.String("zone", "", "the time zone of --at, --until and --final-at (an IANA name); default: the server's")
	until := s.flags.String("until", "", `no delta pass after this time: "2026-11-28 18:00" in the zone, or RFC 3339`)
	finalAt := s.flags.String("final-at", "", `the final pass at this time: "2026-11-28 22:00" in the zone, or RFC 3339`)
	remove := s.flags.Bool("remove", false, "start no more passes by schedule")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	setting := *every != 0 || *at != "" || *until != "" || *finalAt != ""
	switch {
	case *remove && setting:
		return s.usageErrorf("--remove takes no other flag")
	case *remove:
		resp, err := s.client.RemoveTaskScheduleWithResponse(ctx, id)
		return expect(resp, err, http.StatusNoContent)
	case !setting:
		return showCutover(ctx, s, id)
	}
	if *every%time.Minute != 0 {
		return s.usageErrorf("--every must be whole minutes, e.g. 6h or 90m")
	}
	in := api.ScheduleInput{EveryMinutes: int(*every / time.Minute), TimeZone: *zone}
	if *at != "" {
		in.At = strings.Split(*at, ",")
	}
	if *until != "" || *finalAt != "" {
		loc, err := scheduleZone(ctx, s, id, *zone)
		if err != nil {
			return err
		}
		if in.Until, err = parseWhen(*until, loc, "--until"); err != nil {
			return s.usageErrorf("%v", err)
		}
		if in.FinalAt, err = parseWhen(*finalAt, loc, "--final-at"); err != nil {
			return s.usageErrorf("%v", err)
		}
	}
	resp, err := s.client.SetTaskScheduleWithResponse(ctx, id, in)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	sch := *resp.JSON200
	return s.printOutput(sch, func() error { return s.printFields(scheduleFields(sch)) })
}

// scheduleZone is the zone named, or else the server's.
func scheduleZone(ctx context.Context, s *session, id int64, name string) (*time.Location, error) {
	if name == "" {
		resp, err := s.client.GetTaskLifecycleWithResponse(ctx, id)
		if err := expect(resp, err, http.StatusOK); err != nil {
			return nil, err
		}
		name = resp.JSON200.TimeZone
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, s.usageErrorf("--zone %q is not a time zone (an IANA name such as Europe/Berlin)", name)
	}
	return loc, nil
}

// parseWhen reads a time given as "2006-01-02 15:04" in loc or as RFC
// 3339; empty is none.
func parseWhen(text string, loc *time.Location, flag string) (*time.Time, error) {
	if text == "" {
		return nil, nil
	}
	if t, err := time.ParseInLocation("2006-01-02 15:04", text, loc); err == nil {
		return &t, nil
	}
	t, err := time.Parse(time.RFC3339, text)
	if err != nil {
		return nil, fmt.Errorf(`%s %q: give "2006-01-02 15:04" or RFC 3339`, flag, text)
	}
	return &t, nil
}

func scheduleFields(sch api.Schedule) [][2]string {
	loc, err := time.LoadLocation(sch.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	return [][2]string{{"Schedule", orDash(sch.Words)}, {"Time zone", sch.TimeZone},
		{"Next delta pass", whenOrDash(sch.NextPassAt, loc)}}
}

func whenOrDash(t *time.Time, loc *time.Location) string {
	if t == nil {
		return "-"
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04 MST")
}

// showCutover prints where a task's cut-over stands, and its schedule.
func showCutover(ctx context.Context, s *session, id int64) error {
	resp, err := s.client.GetTaskLifecycleWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	l := *resp.JSON200
	fields := [][2]string{{"Stage", strings.ReplaceAll(string(l.Stage), "_", " ")}, {"Cut-over", l.Words}}
	sch, err := s.client.GetTaskScheduleWithResponse(ctx, id)
	switch {
	case err != nil:
		return err
	case sch.StatusCode() == http.StatusOK:
		fields = append(fields, scheduleFields(*sch.JSON200)...)
	case sch.StatusCode() == http.StatusNotFound:
		fields = append(fields, [2]string{"Schedule", "none: passes start by hand"})
	default:
		return expect(sch, nil, http.StatusOK)
	}
	return s.printOutput(l, func() error { return s.printFields(fields) })
}

// tasksFinal makes the task's final pass due now.
func tasksFinal(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.StartFinalPassWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusAccepted); err != nil {
		return err
	}
	if s.output == "table" {
		fmt.Fprintf(s.sys.Stdout, "final pass of task %d due now: it starts when no pass runs; `mailmigrate tasks schedule %d` tells how it goes\n", id, id)
	}
	return nil
}

// tasksPause freezes a task: no pass starts until it is resumed.
func tasksPause(ctx context.Context, s *session, args []string) error {
	stop := s.flags.Bool("stop", false, "hold the pass under way: its running accounts stop between messages and go on where they were on resume")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.PauseTaskWithResponse(ctx, id, api.PauseInput{Stop: *stop})
	if err := expect(resp, err, http.StatusNoContent); err != nil {
		return err
	}
	if s.output == "table" {
		fmt.Fprintf(s.sys.Stdout, "task %d paused: no pass starts until `mailmigrate tasks resume %d`\n", id, id)
	}
	return nil
}

// tasksResume lets a paused task's passes start again.
func tasksResume(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.ResumeTaskWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusNoContent); err != nil {
		return err
	}
	if s.output == "table" {
		fmt.Fprintf(s.sys.Stdout, "task %d resumed\n", id)
	}
	return nil
}
