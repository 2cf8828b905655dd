package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// defaultProgressInterval spaces the progress lines of each account when
// stdout is not a terminal.
const defaultProgressInterval = 10 * time.Second

// followFlags are the flags of the commands that follow a pass.
type followFlags struct {
	follow   bool
	interval time.Duration
}

// bind adds --interval, and --follow described by followHelp when the
// command may or may not follow.
func (ff *followFlags) bind(fs *flag.FlagSet, followHelp string) {
	if followHelp != "" {
		fs.BoolVar(&ff.follow, "follow", false, followHelp)
	}
	fs.DurationVar(&ff.interval, "interval", defaultProgressInterval,
		"when stdout is not a terminal: at most one progress line per account per interval")
}

// followRunHelp is the --follow of the commands that start a pass.
const followRunHelp = "show the progress until the pass ends; exit 1 unless every account completed"

func tasksRun(ctx context.Context, s *session, args []string) error {
	var ff followFlags
	ff.bind(s.flags, followRunHelp)
	selected := selectionFlags(s.flags, "run")
	verify := s.flags.Bool("verify", false,
		"look at both servers of every account, as the final pass does, even one whose source is unchanged since its last complete pass")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	return startAndFollow(ctx, s, id, ff, "pass", false, func() (response, error) {
		return s.client.RunTaskWithResponse(ctx, id, &api.RunTaskParams{Verify: verify}, selected())
	})
}

func tasksTest(ctx context.Context, s *session, args []string) error {
	var ff followFlags
	ff.bind(s.flags, "wait for the results; exit 1 if a login failed")
	selected := selectionFlags(s.flags, "test")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	return startAndFollow(ctx, s, id, ff, "test", true, func() (response, error) {
		return s.client.TestTaskWithResponse(ctx, id, selected())
	})
}

// selectionFlags binds the flags that choose some of a task's accounts
// for verb; the function returned reads them once parsed.
func selectionFlags(fs *flag.FlagSet, verb string) func() api.AccountSelection {
	states := fs.String("state", "", "only "+verb+" accounts in these states, comma-separated, e.g. failed,canceled")
	search := fs.String("search", "", "only "+verb+" accounts with this text in a login, in any case")
	loginTest := fs.String("login-test", "", "only "+verb+" accounts whose last login test passed, failed, or is untested")
	return func() api.AccountSelection {
		sel := api.AccountSelection{State: splitStates(*states), Q: *search}
		if *loginTest != "" {
			sel.LoginTest = (*api.LoginTestFilter)(loginTest)
		}
		return sel
	}
}

// splitStates reads a comma-separated list of account states.
func splitStates(list string) []api.AccountState {
	var states []api.AccountState
	for _, state := range strings.Split(list, ",") {
		if state = strings.TrimSpace(state); state != "" {
			states = append(states, api.AccountState(state))
		}
	}
	return states
}

// startAndFollow starts a pass or (test) a login test of task id and, when
// ff says so, follows it from the first event it causes; what names it.
func startAndFollow(ctx context.Context, s *session, id int64, ff followFlags, what string, test bool, start func() (response, error)) error {
	var after int64
	if ff.follow {
		var err error
		if after, err = lastEventSeq(ctx, s, id); err != nil {
			return err
		}
	}
	resp, err := start()
	if err := expect(resp, err, http.StatusAccepted); err != nil {
		return err
	}
	if !ff.follow {
		if s.output == "table" {
			fmt.Fprintf(s.sys.Stdout, "%s of task %d started; follow it with: mailmigrate tasks watch %d\n", what, id, id)
		}
		return nil
	}
	return s.follow(ctx, id, after, ff.interval, test)
}

func tasksWatch(ctx context.Context, s *session, args []string) error {
	var ff followFlags
	ff.bind(s.flags, "") // watching is following
	after := s.flags.Int64("after", -1, "show the events after this seq too (0: the whole log); default: from now on")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	if *after < 0 {
		if *after, err = lastEventSeq(ctx, s, id); err != nil {
			return err
		}
	}
	return s.follow(ctx, id, *after, ff.interval, false)
}

// tasksEvents lists the stored log, page by page up to --limit events.
func tasksEvents(ctx context.Context, s *session, args []string) error {
	after := s.flags.Int64("after", 0, "only events after this seq")
	limit := s.flags.Int("limit", 0, "at most this many events; 0: all")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	var events []api.Event
	for *limit == 0 || len(events) < *limit {
		page, err := eventPage(ctx, s, id, *after)
		if err != nil {
			return err
		}
		events = append(events, page...)
		if len(page) < eventPageSize { // a short page is the last
			break
		}
		*after = page[len(page)-1].Seq
	}
	if *limit > 0 && len(events) > *limit {
		events = events[:*limit]
	}
	return s.printOutput(events, func() error {
		rows := make([][]string, 0, len(events))
		for _, ev := range events {
			rows = append(rows, []string{itoa(ev.Seq), ev.Time.Local().Format(time.DateTime), string(ev.Kind), ev.Message})
		}
		return s.printTable([]string{"SEQ", "TIME", "KIND", "MESSAGE"}, rows)
	})
}

// tasksCancel stops a pass, or with a selection some accounts of it while
// the others go on.
func tasksCancel(ctx context.Context, s *session, args []string) error {
	selected := selectionFlags(s.flags, "cancel")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.CancelTaskWithResponse(ctx, id, selected())
	if err := expect(resp, err, http.StatusAccepted); err != nil {
		return err
	}
	if s.output == "table" {
		fmt.Fprintf(s.sys.Stdout, "%d of task %d stopping\n", resp.JSON202.Accounts, id)
	}
	return nil
}

func tasksReport(ctx context.Context, s *session, args []string) error {
	file := s.flags.String("o", "", "write the report to this file instead of stdout")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.GetTaskReportWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	return s.writeDownload(*file, resp.Body)
}

// writeDownload writes a file the service sent (a report, the audit
// trail) to stdout, or to the file named, whole or not at all.
func (s *session) writeDownload(file string, data []byte) error {
	if file == "" {
		_, err := s.sys.Stdout.Write(data)
		return err
	}
	return writeFileAtomically(file, data)
}

// writeFileAtomically writes data to name through a temporary file, so
// that a report is never left half written. The file is private (0600):
// a report names people's mailboxes.
func writeFileAtomically(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".report-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
