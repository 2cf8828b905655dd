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

// planPage is how many accounts' plans the CLI reads at a time: the most
// the API gives (the plan's limit; TestTheCLIAndTheDomainAgree).
const planPage = 1000

// tasksPlan plans (dry-runs) the task's accounts, waits for the plans and
// prints them: per account what is to copy and its problems in words
// (--problems: only the accounts with one; --folders: each account's
// folder plan too). --show prints the newest plans without starting new
// ones. It exits 1 when a plan failed or has a blocking problem.
func tasksPlan(ctx context.Context, s *session, args []string) error {
	show := s.flags.Bool("show", false, "print the newest plans without starting new ones")
	folders := s.flags.Bool("folders", false, "also print each account's folder plan (one request per account)")
	onlyProblems := s.flags.Bool("problems", false, "list only the accounts whose plan failed or found a problem")
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
	// Wait on the sums alone, then read the accounts a page at a time.
	one := 1
	for {
		resp, err := s.client.GetTaskPlanWithResponse(ctx, id, &api.GetTaskPlanParams{Limit: &one})
		if err := expect(resp, err, http.StatusOK); err != nil {
			return err
		}
		if resp.JSON200.Pending == 0 || *show {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(planPoll):
		}
	}
	filter := api.PlanFilterAll
	if *onlyProblems {
		filter = api.PlanFilterProblems
	}
	plan, err := s.taskPlan(ctx, id, filter)
	if err != nil {
		return err
	}
	listing := taskPlanListing{TaskPlan: plan}
	if *folders {
		for _, a := range plan.Accounts {
			if a.State != api.PlanStateDone {
				continue
			}
			resp, err := s.client.GetAccountPlanWithResponse(ctx, id, a.AccountId)
			if err := expect(resp, err, http.StatusOK); err != nil {
				return err
			}
			listing.Plans = append(listing.Plans, *resp.JSON200)
		}
	}
	if err := s.printOutput(listing, func() error { return s.printPlan(listing) }); err != nil {
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

// taskPlanListing is what tasks plan prints: the task's plan and, with
// --folders, the accounts' whole plans.
type taskPlanListing struct {
	api.TaskPlan
	Plans []api.AccountPlanRecord `json:"plans,omitempty"`
}

// taskPlan reads the task's plan with every account the filter selects,
// a page at a time.
func (s *session) taskPlan(ctx context.Context, id int64, filter api.PlanFilter) (api.TaskPlan, error) {
	limit := planPage
	params := &api.GetTaskPlanParams{Filter: &filter, Limit: &limit}
	var plan api.TaskPlan
	var accounts []api.AccountPlanSummary
	for {
		resp, err := s.client.GetTaskPlanWithResponse(ctx, id, params)
		if err := expect(resp, err, http.StatusOK); err != nil {
			return api.TaskPlan{}, err
		}
		plan = *resp.JSON200
		accounts = append(accounts, plan.Accounts...)
		if len(plan.Accounts) < limit {
			break
		}
		after := plan.Accounts[len(plan.Accounts)-1].AccountId
		params.After = &after
	}
	plan.Accounts = accounts
	return plan, nil
}

func (s *session) printPlan(listing taskPlanListing) error {
	plan := listing.TaskPlan
	rows := make([][]string, 0, len(plan.Accounts))
	var problems []string
	for _, a := range plan.Accounts {
		row := []string{itoa(a.AccountId), a.SourceLogin, string(a.State), "-", "-", "-", "-", "-"}
		if a.State == api.PlanStateDone {
			quota := "none"
			if a.QuotaFree >= 0 {
				quota = megabytes(a.QuotaFree)
			}
			row = []string{itoa(a.AccountId), a.SourceLogin, string(a.State), strconv.Itoa(a.Folders), strconv.Itoa(a.SourceMessages),
				megabytes(a.SourceBytes), megabytes(a.ToCopyBytes), quota}
		}
		problems = append(problems, problemLines(a.SourceLogin, a.Problems, a.Error)...)
		rows = append(rows, row)
	}
	estimate := "unknown until a pass has run"
	if plan.EstimateSeconds != nil {
		estimate = fmt.Sprintf("about %s at %s MB/s", durationText(time.Duration(*plan.EstimateSeconds)*time.Second), megabytes(int64(plan.RateBytesPerSecond)))
	}
	out := s.sys.Stdout
	fmt.Fprintf(out, "%d planned, %d failed, %d blocked, %d with problems; %s MB of %s MB to copy; time: %s\n\n",
		plan.Done, plan.Failed, plan.Blocked, plan.WithProblems, megabytes(plan.ToCopyBytes), megabytes(plan.SourceBytes), estimate)
	if err := s.printTable([]string{"ID", "LOGIN", "PLAN", "FOLDERS", "MESSAGES", "MB", "MB TO COPY", "QUOTA FREE MB"}, rows); err != nil {
		return err
	}
	if len(problems) > 0 {
		fmt.Fprintf(out, "\n%s\n", strings.Join(problems, "\n"))
	}
	for _, r := range listing.Plans {
		fmt.Fprintln(out)
		if err := s.printFolderPlan(r); err != nil {
			return err
		}
	}
	return nil
}

// problemLines are an account's plan problems, a line each, after its login.
func problemLines(login string, problems []api.PlanProblem, failure string) []string {
	var lines []string
	for _, problem := range problems {
		mark := "warning"
		if problem.Blocking {
			mark = "BLOCKING"
		}
		lines = append(lines, fmt.Sprintf("%s: %s %s: %s", login, mark, problem.Kind, problem.Words))
	}
	if failure != "" {
		lines = append(lines, fmt.Sprintf("%s: not planned: %s", login, failure))
	}
	return lines
}

// printFolderPlan prints an account's whole plan: the capabilities, each
// folder's plan, what the task's patterns leave out and the messages too
// large for the destination.
func (s *session) printFolderPlan(r api.AccountPlanRecord) error {
	out := s.sys.Stdout
	p := r.Plan
	if p == nil {
		_, err := fmt.Fprintf(out, "%s: plan %s, no folders known\n", r.SourceLogin, r.State)
		return err
	}
	fmt.Fprintf(out, "%s (source: %s; destination: %s)\n", r.SourceLogin,
		strings.Join(p.SourceCapabilities, " "), strings.Join(p.DestinationCapabilities, " "))
	rows := make([][]string, 0, len(p.Folders))
	for _, f := range p.Folders {
		note := ""
		switch {
		case f.Moved != "":
			note = strings.ReplaceAll(f.Moved, "_", " ") + ": wanted " + f.Wanted
		case f.Create:
			note = "created"
		}
		if f.OversizeMessages > 0 {
			note = strings.TrimPrefix(note+fmt.Sprintf("; %d too large", f.OversizeMessages), "; ")
		}
		rows = append(rows, []string{f.Source, f.Destination, orDash(f.Role), strconv.Itoa(f.SourceMessages),
			megabytes(f.SourceBytes), megabytes(f.ToCopyBytes), strconv.Itoa(f.DestinationMessages), orDash(note)})
	}
	if err := s.printTable([]string{"SOURCE", "DESTINATION", "ROLE", "MESSAGES", "MB", "MB TO COPY", "ON DESTINATION", "NOTE"}, rows); err != nil {
		return err
	}
	if len(p.Excluded) > 0 {
		fmt.Fprintf(out, "left out by the task's folder patterns: %s\n", strings.Join(p.Excluded, ", "))
	}
	for _, m := range p.Oversize {
		fmt.Fprintf(out, "too large for the destination: %s UID %d, %s MB\n", m.Folder, m.Uid, megabytes(m.Size))
	}
	return nil
}

// accountsPlan prints an account's newest plan, whole; it exits 1 when
// the plan failed or has a blocking problem.
func accountsPlan(ctx context.Context, s *session, args []string) error {
	taskID, accountID, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	resp, err := s.client.GetAccountPlanWithResponse(ctx, taskID, accountID)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	r := *resp.JSON200
	if err := s.printOutput(r, func() error {
		if err := s.printFolderPlan(r); err != nil {
			return err
		}
		var problems []api.PlanProblem
		if r.Plan != nil {
			problems = r.Plan.Problems
			if r.Plan.Scripts != nil {
				if _, err := fmt.Fprintf(s.sys.Stdout, "\nSieve scripts: %s\n", r.Plan.Scripts.Summary); err != nil {
					return err
				}
			}
		}
		if lines := problemLines(r.SourceLogin, problems, r.Error); len(lines) > 0 {
			_, err := fmt.Fprintf(s.sys.Stdout, "\n%s\n", strings.Join(lines, "\n"))
			return err
		}
		return nil
	}); err != nil {
		return err
	}
	switch {
	case r.State == api.PlanStateFailed:
		return &unfinishedError{reason: "the account could not be planned"}
	case r.Blocking:
		return &unfinishedError{reason: "the account is blocked"}
	}
	return nil
}

func pluralText(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
