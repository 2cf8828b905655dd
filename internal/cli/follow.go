package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// refreshEvery spaces the refreshes of the figures while a pass goes on;
// events refresh what they concern at once.
const refreshEvery = time.Second

// follower shows a task's pass or test live until it ends: events from
// the WebSocket are printed and trigger refreshes of the figures, which
// come from the task and its running accounts.
type follower struct {
	s        *session
	taskID   int64
	lastSeq  int64 // of the last event handled
	board    *board
	display  display
	testing  bool // a login test is followed, not a pass
	troubled bool // the last refresh failed in transit; said once
}

// follow shows task taskID from the event after seq `after` until the
// task is no longer running, then prints a summary. It fails when the
// pass did not complete or a login test failed. test says that a login
// test was started, which may be over before the follow begins.
func (s *session) follow(ctx context.Context, taskID, after int64, interval time.Duration, test bool) error {
	f := &follower{s: s, taskID: taskID, lastSeq: after, board: newBoard(), display: s.newDisplay(interval), testing: test}
	streamCtx, stopStream := context.WithCancel(ctx)
	messages := make(chan streamMessage, 64)
	streamDone := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { streamDone <- s.streamEvents(streamCtx, taskID, after, messages) })
	defer stopStream()
	err := f.start(ctx)
	if err == nil {
		err = f.loop(ctx, messages, streamDone)
	}
	stopStream() // then no event arrives but through catchUp
	wg.Wait()
	if err == nil {
		err = f.catchUp(ctx, messages)
	}
	f.display.close()
	if err != nil && ctx.Err() != nil {
		// Interrupted (Ctrl-C): the pass itself goes on in the service.
		return &unfinishedError{reason: fmt.Sprintf("stopped following task %d, which goes on; see it again with: mailmigrate tasks watch %d", taskID, taskID)}
	}
	if err != nil {
		return err
	}
	return f.summary(ctx)
}

func (s *session) newDisplay(interval time.Duration) display {
	switch {
	case s.output == "json":
		return silentDisplay{}
	case s.sys.StdoutIsTerminal:
		return &ttyDisplay{out: s.sys.Stdout, width: s.sys.TerminalWidth}
	default:
		return newPlainDisplay(s.sys.Stdout, s.sys.Stderr, interval)
	}
}

// start takes the task and its running accounts as they are now.
func (f *follower) start(ctx context.Context) error {
	task, err := getTask(ctx, f.s, f.taskID)
	if err != nil {
		return err
	}
	now := time.Now()
	f.board.setTask(task, now)
	f.testing = f.testing || task.State == api.TaskStateTesting
	if !f.busy() {
		return nil
	}
	accounts, err := listAccounts(ctx, f.s, f.taskID)
	if err != nil {
		return err
	}
	for _, a := range accounts {
		f.board.setAccount(a, now)
	}
	f.showProgress()
	return nil
}

// showProgress shows the figures of a pass; a login test has none, its
// events say it all.
func (f *follower) showProgress() {
	if !f.testing {
		f.display.progress(f.board)
	}
}

// runningStates are the states of a task whose pass or login test goes
// on, in the API's words (the domain's RunningTaskStates:
// TestTheCLIAndTheDomainAgree keeps them in step).
var runningStates = []api.TaskState{api.TaskStateQueued, api.TaskStateRunning, api.TaskStateTesting, api.TaskStateCanceling}

func isRunning(state api.TaskState) bool { return slices.Contains(runningStates, state) }

// busy says whether what is followed goes on: a login test, which runs
// beside whatever the task does, or the task's pass.
func (f *follower) busy() bool {
	if f.testing {
		return f.board.task.Tests.Running || f.board.task.State == api.TaskStateTesting
	}
	return isRunning(f.board.task.State)
}

func (f *follower) loop(ctx context.Context, messages <-chan streamMessage, streamDone <-chan error) error {
	ticker := time.NewTicker(refreshEvery)
	defer ticker.Stop()
	for f.busy() {
		var err error
		select {
		case m := <-messages:
			err = f.handle(ctx, m)
		case <-ticker.C:
			err = f.refresh(ctx)
		case err = <-streamDone:
			if err == nil {
				err = ctx.Err()
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// catchUp prints the events that the stream had not delivered when the
// task was seen finished: those the stream left in messages, then the
// stored ones after them. The task's final state commits with its last
// events, so the stored log now holds every event of the pass.
func (f *follower) catchUp(ctx context.Context, messages <-chan streamMessage) error {
	for len(messages) > 0 {
		f.print(<-messages)
	}
	for {
		events, err := eventPage(ctx, f.s, f.taskID, f.lastSeq)
		if err != nil {
			return err
		}
		for _, ev := range events {
			f.print(streamMessage{event: ev})
		}
		if len(events) < eventPageSize { // a short page is the last
			return nil
		}
	}
}

// handle prints an event and refreshes what it is about.
func (f *follower) handle(ctx context.Context, m streamMessage) error {
	f.print(m)
	if m.notice != "" {
		return nil
	}
	ev := m.event
	switch ev.Kind {
	case api.EventKindAccountStarted, api.EventKindAccountDone, api.EventKindAccountFailed,
		api.EventKindAccountThrottled, api.EventKindAccountHeld:
		// The other running accounts come with the next tick.
		if err := f.refreshAccount(ctx, ev.AccountId); err != nil {
			return err
		}
		if err := f.refreshTask(ctx); err != nil {
			return err
		}
		f.showProgress()
		return nil
	case api.EventKindRunFinished, api.EventKindRunCanceled:
		return f.refresh(ctx)
	}
	return nil
}

// print shows a notice, or an event that is news to the follow.
func (f *follower) print(m streamMessage) {
	switch {
	case m.notice != "":
		f.display.notice(m.notice)
	case m.event.Seq <= f.lastSeq:
	default:
		f.lastSeq = m.event.Seq
		if m.event.Kind != api.EventKindAccountProgress && m.event.Kind != api.EventKindFolderDone {
			f.display.line(eventLine(m.event))
		}
	}
}

// eventLine is an event for people, e.g.
// "14:03:07  account.failed  bob → imap.old.example:993: authentication failed".
func eventLine(ev api.Event) string {
	text := ev.Message
	if text == "" {
		text = ev.Login
		if ev.Host != "" {
			text += fmt.Sprintf(" → %s:%d", ev.Host, ev.Port)
		}
		if ev.Error != "" {
			text += ": " + ev.Error
		}
	}
	return ev.Time.Local().Format(time.TimeOnly) + "  " + string(ev.Kind) + "  " + cleanCell(text)
}

// refresh takes fresh figures of the task, its pass under way and its
// running accounts.
func (f *follower) refresh(ctx context.Context) error {
	if err := f.refreshTask(ctx); err != nil {
		return err
	}
	if err := f.refreshPass(ctx); err != nil {
		return err
	}
	now := time.Now()
	for _, v := range f.board.running() {
		a, err := getAccount(ctx, f.s, f.taskID, v.account.Id)
		if f.passing(err) {
			return nil
		} else if err != nil {
			return err
		}
		f.board.setAccount(a, now)
	}
	f.showProgress()
	return nil
}

// refreshTask takes fresh figures of the task.
func (f *follower) refreshTask(ctx context.Context) error {
	task, err := getTask(ctx, f.s, f.taskID)
	if f.passing(err) {
		return nil
	} else if err != nil {
		return err
	}
	f.board.setTask(task, time.Now())
	return nil
}

// refreshPass takes the figures of the pass under way, which the time
// left goes by: once a tick, not with each account's event.
func (f *follower) refreshPass(ctx context.Context) error {
	if f.testing {
		return nil
	}
	runs, err := f.s.client.ListTaskPassesWithResponse(ctx, f.taskID)
	if f.passing(err) {
		return nil
	} else if err := expect(runs, err, http.StatusOK); err != nil {
		return err
	}
	f.board.pass = nil
	for i, p := range *runs.JSON200 {
		if p.EndedAt == nil {
			f.board.pass = &(*runs.JSON200)[i]
		}
	}
	return nil
}

func (f *follower) refreshAccount(ctx context.Context, id int64) error {
	a, err := getAccount(ctx, f.s, f.taskID, id)
	if f.passing(err) {
		return nil
	} else if err != nil {
		return err
	}
	f.board.setAccount(a, time.Now())
	return nil
}

// passing says whether err is a failure to reach the server, which a
// follow rides out (the next refresh tries again), and says so once.
// An answer of the server, e.g. not found, is no such failure.
func (f *follower) passing(err error) bool {
	var answer *apiError
	if err == nil || errors.As(err, &answer) || isCanceled(err) {
		f.troubled = false
		return false
	}
	if !f.troubled {
		f.display.notice(fmt.Sprintf("cannot refresh the figures (%v); trying again", err))
	}
	f.troubled = true
	return true
}

func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
