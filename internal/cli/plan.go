package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// planPoll spaces the reads of a plan under way.
const planPoll = 500 * time.Millisecond

// tasksPlan plans (dry-runs) the task's accounts, waits for the plans and
// prints them: per account what is to copy and its problems in words
// (--folders: each folder's plan too). --show prints the newest plans
// without starting new ones. It exits 1 when a plan failed or has a
// blocking problem.
func tasksPlan(ctx context.Context, s *session, args []string) error {
	show := s.flags.Bool("show", false, "print the newest plans without starting new ones")
	folders := s.flags.Bool("folders", false, "also print each account's folder plan")
	selected := selectionFlags(s.flags, "plan")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	if !*show {
		resp, err := s.client.PlanTaskWithResponse(ctx, id, selected())
		if err := expect(resp, err, http.StatusAccepted); err != nil {
			return err
		}
	}
	var plan api.TaskPlan
	for {
		resp, err := s.client.GetTaskPlanWithResponse(ctx, id)
		if err := expect(resp, err, http.StatusOK); err != nil {
			return err
		}
		if plan = *resp.JSON200; plan.Pending == 0 || *show {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(planPoll):
		}
	}
	if err := s.printOutput(plan, func() error { return s.printPlan(plan, *folders) }); err != nil {
		return err
	}
	var not []string
	if plan.Failed > 0 {
		not = append(not, fmt.Sprintf("%d %s could not be planned", plan.Failed, pluralText(plan.Failed, "account", "accounts")))
	}
	if plan.Blocked > 0 {
		not = append(not, fmt.Sprintf("%d %s blocked", plan.Blocked, pluralText(plan.Blocked, "account is", "accounts are")))
	}
	if len(not) > 0 {
		return &unfinishedError{reason: strings.Join(not, "; ")}
	}
	return nil
}

func (s *session) printPlan(plan api.TaskPlan, folders bool) error {
	rows := make([][]string, 0, len(plan.Accounts))
	var problems []string
	for _, a := range plan.Accounts {
		row := []string{a.SourceLogin, string(a.State), "-", "-", "-", "-", "-"}
		if p := a.Plan; p != nil {
			quota := "none"
			if p.QuotaFree >= 0 {
				quota = megabytes(p.QuotaFree)
			}
			row = []string{a.SourceLogin, string(a.State), strconv.Itoa(len(p.Folders)), strconv.Itoa(p.SourceMessages),
				megabytes(p.SourceBytes), megabytes(p.ToCopyBytes), quota}
			for _, problem := range p.Problems {
				mark := "warning"
				if problem.Blocking {
					mark = "BLOCKING"
				}
				problems = append(problems, fmt.Sprintf("%s: %s %s: %s", a.SourceLogin, mark, problem.Kind, problem.Words))
			}
		}
		if a.Error != "" {
			problems = append(problems, fmt.Sprintf("%s: not planned: %s", a.SourceLogin, a.Error))
		}
		rows = append(rows, row)
	}
	estimate := "unknown until a pass has run"
	if plan.EstimateSeconds != nil {
		estimate = fmt.Sprintf("about %s at %s MB/s", durationText(time.Duration(*plan.EstimateSeconds)*time.Second), megabytes(int64(plan.RateBytesPerSecond)))
	}
	out := s.sys.Stdout
	fmt.Fprintf(out, "%d planned, %d failed, %d blocked; %s MB of %s MB to copy; time: %s\n\n",
		plan.Done, plan.Failed, plan.Blocked, megabytes(plan.ToCopyBytes), megabytes(plan.SourceBytes), estimate)
	if err := s.printTable([]string{"LOGIN", "PLAN", "FOLDERS", "MESSAGES", "MB", "MB TO COPY", "QUOTA FREE MB"}, rows); err != nil {
		return err
	}
	if len(problems) > 0 {
		fmt.Fprintf(out, "\n%s\n", strings.Join(problems, "\n"))
	}
	if !folders {
		return nil
	}
	for _, a := range plan.Accounts {
		if a.Plan == nil {
			continue
		}
		fmt.Fprintf(out, "\n%s (source: %s; destination: %s)\n", a.SourceLogin,
			strings.Join(a.Plan.SourceCapabilities, " "), strings.Join(a.Plan.DestinationCapabilities, " "))
		frows := make([][]string, 0, len(a.Plan.Folders))
		for _, f := range a.Plan.Folders {
			note := ""
			switch {
			case f.Moved != "":
				note = strings.ReplaceAll(f.Moved, "_", " ") + ": wanted " + f.Wanted
			case f.Create:
				note = "created"
			}
			frows = append(frows, []string{f.Source, f.Destination, orDash(f.Role), strconv.Itoa(f.SourceMessages),
				megabytes(f.SourceBytes), strconv.Itoa(f.DestinationMessages), orDash(note)})
		}
		if err := s.printTable([]string{"SOURCE", "DESTINATION", "ROLE", "MESSAGES", "MB", "ON DESTINATION", "NOTE"}, frows); err != nil {
			return err
		}
		if len(a.Plan.Excluded) > 0 {
			fmt.Fprintf(out, "left out by the task's folder patterns: %s\n", strings.Join(a.Plan.Excluded, ", "))
		}
	}
	return nil
}

func pluralText(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
