package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

func taskCommands() []command {
	return []command{
		{"list", "", "List the migration tasks", tasksList},
		{"get", "ID", "Show a task: state, accounts by state, totals", tasksGet},
		{"create", "", "Create a task between two endpoints; prints its id", tasksCreate},
		{"update", "ID", "Change the given fields of a task", tasksUpdate},
		{"delete", "ID", "Delete a task and its accounts", tasksDelete},
		{"test", "ID", "Test the logins of every account (--follow: wait for the results)", tasksTest},
		{"run", "ID", "Start a pass: migrate every account (--follow: show the progress until it ends); a selection joins the pass under way", tasksRun},
		{"cancel", "ID", "Stop the pass under way, or with --state/--search some of its accounts", tasksCancel},
		{"watch", "ID", "Show a task's live progress until its pass ends", tasksWatch},
		{"events", "ID", "List a task's stored event log", tasksEvents},
		{"report", "ID", "Write the per-account results as CSV", tasksReport},
		{"passes", "ID", "List a task's passes: each with what started it, its accounts and figures", tasksPasses},
		{"runs", "ID", "The old name of passes", tasksPasses},
		{"webhook", "ID", "Show, set (--set URL, the secret from --secret-file or MAILMIGRATE_WEBHOOK_SECRET) or --remove the URL called when a pass ends or an account fails", tasksWebhook},
		{"deliveries", "ID", "List the task's webhook calls, newest first: state, attempts, the receiver's last answer", tasksDeliveries},
		{"mail", "ID", "Show, set (--to a@x,b@y) or --remove who is mailed the summary and CSV report when a pass ends; and the mails sent", tasksMail},
		{"plan", "ID", "Dry run: read both servers, copy nothing; print per account what is to copy and what stands in the way (exit 1 if blocked)", tasksPlan},
		{"schedule", "ID", "Show where the cut-over stands; set delta passes (--every 6h or --at 06:00,18:00, --until) and the final pass (--final-at); or --remove", tasksSchedule},
		{"final", "ID", "Final pass now: it starts when no pass runs, and its end verifies the task", tasksFinal},
		{"pause", "ID", "Freeze the task: no pass starts, by hand or schedule (--stop: cancel the pass under way)", tasksPause},
		{"resume", "ID", "Let a paused task's passes start again", tasksResume},
	}
}

func tasksPasses(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.ListTaskPassesWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	runs := *resp.JSON200
	return s.printOutput(runs, func() error {
		rows := make([][]string, 0, len(runs)+1)
		var copied, bytes, skipped, failed int64
		for _, r := range runs {
			state, took := "running", time.Since(r.StartedAt)
			if r.State != nil && r.EndedAt != nil {
				state, took = string(*r.State), r.EndedAt.Sub(r.StartedAt)
			}
			rows = append(rows, []string{strconv.Itoa(r.Pass), string(r.StartedBy), timeOrDash(&r.StartedAt), durationText(took), state,
				fmt.Sprintf("%d: %d ok, %d with errors, %d failed, %d canceled", r.Accounts, r.AccountsCompleted,
					r.AccountsCompletedWithErrors, r.AccountsFailed, r.AccountsCanceled),
				strconv.FormatInt(r.MessagesCopied, 10), megabytes(r.BytesCopied), fmt.Sprintf("%d/%d", r.MessagesSkipped, r.MessagesFailed)})
			copied, bytes, skipped, failed = copied+r.MessagesCopied, bytes+r.BytesCopied, skipped+r.MessagesSkipped, failed+r.MessagesFailed
		}
		if len(runs) > 1 {
			rows = append(rows, []string{"all", "", "", "", "", "", strconv.FormatInt(copied, 10), megabytes(bytes), fmt.Sprintf("%d/%d", skipped, failed)})
		}
		return s.printTable([]string{"PASS", "BY", "STARTED", "TOOK", "STATE", "ACCOUNTS", "COPIED", "MB", "SKIPPED/FAILED"}, rows)
	})
}

func tasksList(ctx context.Context, s *session, args []string) error {
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.ListTasksWithResponse(ctx)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	tasks := *resp.JSON200
	return s.printOutput(tasks, func() error {
		rows := make([][]string, 0, len(tasks))
		for _, t := range tasks {
			rows = append(rows, []string{
				itoa(t.Id), orDash(t.Name), string(t.State), itoa(t.SourceEndpointId), itoa(t.DestinationEndpointId),
				itoa(t.Accounts.Total), itoa(t.Accounts.Failed), itoa(t.Totals.MessagesCopied), megabytes(t.Totals.BytesCopied),
			})
		}
		return s.printTable([]string{"ID", "NAME", "STATE", "SOURCE", "DESTINATION", "ACCOUNTS", "FAILED", "MESSAGES", "MB"}, rows)
	})
}

func tasksGet(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	t, err := getTask(ctx, s, id)
	if err != nil {
		return err
	}
	return s.printOutput(t, func() error {
		resp, err := s.client.GetTaskLifecycleWithResponse(ctx, id)
		if err := expect(resp, err, http.StatusOK); err != nil {
			return err
		}
		return s.printFields(append(taskFields(t), [2]string{"Cut-over", resp.JSON200.Words}))
	})
}

func taskFields(t api.Task) [][2]string {
	fields := [][2]string{
		{"ID", itoa(t.Id)}, {"Name", orDash(t.Name)}, {"State", string(t.State)},
		{"Source endpoint", itoa(t.SourceEndpointId)}, {"Destination endpoint", itoa(t.DestinationEndpointId)},
		{"Accounts", accountCountsText(t.Accounts)},
		{"Logins", testCounts(int(t.Logins.Working), int(t.Logins.Refused), int(t.Accounts.Total))},
		{"Copied to date", fmt.Sprintf("%d messages, %s MB", t.Totals.MessagesCopiedToDate, megabytes(t.Totals.BytesCopiedToDate))},
		{"Last pass", fmt.Sprintf("%d copied (%s MB), %d skipped, %d failed",
			t.Totals.MessagesCopied, megabytes(t.Totals.BytesCopied), t.Totals.MessagesSkipped, t.Totals.MessagesFailed)},
		{"Options", optionsText(t.Options)},
		{"Created", timeOrDash(&t.CreatedAt)}, {"Started", timeOrDash(t.StartedAt)}, {"Finished", timeOrDash(t.FinishedAt)},
	}
	if t.Tests.Pace != "" {
		fields = append(fields, [2]string{"Login test", fmt.Sprintf("%d of %d tested: %s", t.Tests.Tested, t.Tests.Total, t.Tests.Pace)})
	}
	return fields
}

// accountCountsText says how many accounts are in each state, e.g.
// "3: 2 completed, 1 failed".
func accountCountsText(c api.AccountCounts) string {
	var parts []string
	for _, n := range []struct {
		state string
		count int64
	}{
		{"idle", c.Idle}, {"queued", c.Queued}, {"testing", c.Testing}, {"running", c.Running}, {"completed", c.Completed},
		{"completed with errors", c.CompletedWithErrors}, {"failed", c.Failed}, {"canceled", c.Canceled},
	} {
		if n.count > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n.count, n.state))
		}
	}
	if len(parts) == 0 {
		return itoa(c.Total)
	}
	return itoa(c.Total) + ": " + strings.Join(parts, ", ")
}

func optionsText(o api.TaskOptions) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if len(o.IncludeFolders) > 0 {
		add("include %s", strings.Join(o.IncludeFolders, " "))
	}
	if len(o.ExcludeFolders) > 0 {
		add("exclude %s", strings.Join(o.ExcludeFolders, " "))
	}
	for _, from := range sortedKeys(o.FolderMap) {
		add("map %q→%q", from, o.FolderMap[from])
	}
	if o.MaxMessageBytes > 0 {
		add("max message %d bytes", o.MaxMessageBytes)
	}
	if o.Since != "" {
		add("since %s", o.Since)
	}
	if o.MirrorDeletions {
		add("mirror deletions")
	}
	if o.ParallelAccounts > 0 {
		add("%d accounts at once", o.ParallelAccounts)
	}
	if o.RefuseBlocked {
		add("refuse blocked accounts")
	}
	if o.GmailLabels != "" && o.GmailLabels != api.GmailLabelsFirstLabel {
		add("gmail labels %s", o.GmailLabels)
	}
	if o.VerifyCopies == api.VerifyCopiesCounts {
		add("copies counted, not read back")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func getTask(ctx context.Context, s *session, id int64) (api.Task, error) {
	resp, err := s.client.GetTaskWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return api.Task{}, err
	}
	return *resp.JSON200, nil
}

// taskFlags binds a task's fields to flags, starting from in.
func taskFlags(fs *flag.FlagSet, in *api.TaskInput) {
	if in.Options == nil {
		in.Options = &api.TaskOptions{}
	}
	o := in.Options
	fs.StringVar(&in.Name, "name", in.Name, "the task's name")
	fs.Int64Var(&in.SourceEndpointId, "source", in.SourceEndpointId, "id of the endpoint to migrate from")
	fs.Int64Var(&in.DestinationEndpointId, "destination", in.DestinationEndpointId, "id of the endpoint to migrate to")
	fs.Var((*stringList)(&o.IncludeFolders), "include-folder", "copy only source folders matching this regular expression (repeatable)")
	fs.Var((*stringList)(&o.ExcludeFolders), "exclude-folder", "do not copy source folders matching this regular expression (repeatable)")
	fs.Var((*folderMap)(&o.FolderMap), "folder-map", "SOURCE=DESTINATION: put a source folder under another name (repeatable)")
	fs.Int64Var(&o.MaxMessageBytes, "max-message-bytes", o.MaxMessageBytes, "skip larger messages; 0: no limit")
	fs.StringVar(&o.Since, "since", o.Since, "YYYY-MM-DD: copy only messages received later")
	fs.IntVar(&o.ParallelAccounts, "parallel-accounts", o.ParallelAccounts, "accounts migrated at once; 0: 4")
	fs.BoolVar(&o.MirrorDeletions, "mirror-deletions", o.MirrorDeletions, "expunge the task's copies of messages expunged from the source")
	fs.BoolVar(&o.RefuseBlocked, "refuse-blocked", o.RefuseBlocked, "leave out of passes the accounts whose plan has a blocking problem (quota, collision)")
	fs.StringVar((*string)(&o.GmailLabels), "gmail-labels", string(o.GmailLabels),
		"leaving Gmail: first-label (each message once, in its first label), keywords (once, labels as keywords) or folders (a copy per label); default first-label")
	fs.StringVar((*string)(&o.VerifyCopies), "verify-copies", string(o.VerifyCopies),
		"headers (read each new copy back: size and header must be what was sent), counts (only that every copy is there, for a destination that re-encodes mail) or full (read each copy back whole: every byte); default headers")
}

// stringList is a repeatable flag; given again in an update, it replaces
// the stored list.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// folderMap is the repeatable flag SOURCE=DESTINATION.
type folderMap map[string]string

func (m *folderMap) String() string { return "" }
func (m *folderMap) Set(v string) error {
	from, to, ok := strings.Cut(v, "=")
	if !ok || from == "" || to == "" {
		return fmt.Errorf("want SOURCE=DESTINATION")
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[from] = to
	return nil
}

func tasksCreate(ctx context.Context, s *session, args []string) error {
	var in api.TaskInput
	taskFlags(s.flags, &in)
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	if in.SourceEndpointId == 0 || in.DestinationEndpointId == 0 {
		return s.usageErrorf("--source and --destination are required")
	}
	resp, err := s.client.CreateTaskWithResponse(ctx, in)
	if err := expect(resp, err, http.StatusCreated); err != nil {
		return err
	}
	return s.printCreated(resp.JSON201.Id)
}

// tasksUpdate changes only the fields given as flags: PUT replaces every
// field, so it starts from the stored task.
func tasksUpdate(ctx context.Context, s *session, args []string) error {
	var in api.TaskInput
	taskFlags(s.flags, &in)
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	current, err := getTask(ctx, s, id)
	if err != nil {
		return err
	}
	merged := api.TaskInput{Name: current.Name, SourceEndpointId: current.SourceEndpointId, DestinationEndpointId: current.DestinationEndpointId, Options: &current.Options}
	s.flags.Visit(func(f *flag.Flag) { applyTaskFlag(f.Name, in, &merged) })
	resp, err := s.client.UpdateTaskWithResponse(ctx, id, merged)
	return expect(resp, err, http.StatusNoContent)
}

func applyTaskFlag(name string, from api.TaskInput, to *api.TaskInput) {
	o, f := to.Options, from.Options
	switch name {
	case "name":
		to.Name = from.Name
	case "source":
		to.SourceEndpointId = from.SourceEndpointId
	case "destination":
		to.DestinationEndpointId = from.DestinationEndpointId
	case "include-folder":
		o.IncludeFolders = f.IncludeFolders
	case "exclude-folder":
		o.ExcludeFolders = f.ExcludeFolders
	case "folder-map":
		o.FolderMap = f.FolderMap
	case "max-message-bytes":
		o.MaxMessageBytes = f.MaxMessageBytes
	case "since":
		o.Since = f.Since
	case "parallel-accounts":
		o.ParallelAccounts = f.ParallelAccounts
	case "mirror-deletions":
		o.MirrorDeletions = f.MirrorDeletions
	case "gmail-labels":
		o.GmailLabels = f.GmailLabels
	case "refuse-blocked":
		o.RefuseBlocked = f.RefuseBlocked
	case "verify-copies":
		o.VerifyCopies = f.VerifyCopies
	}
}

func tasksDelete(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.DeleteTaskWithResponse(ctx, id)
	return expect(resp, err, http.StatusNoContent)
}
