package migration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A plan (dry run) of an account: what an attempt would do, read from both
// servers without copying (docs/design.md#plans). It is kept as JSON, in
// the API's words.
type AccountPlan struct {
	SourceCapabilities      []string        `json:"source_capabilities"`
	DestinationCapabilities []string        `json:"destination_capabilities"`
	Folders                 []PlannedFolder `json:"folders"`
	Excluded                []string        `json:"excluded"` // source folders the task's patterns leave out
	SourceMessages          int             `json:"source_messages"`
	SourceBytes             int64           `json:"source_bytes"`
	ToCopyBytes             int64           `json:"to_copy_bytes"`
	DestinationMessages     int             `json:"destination_messages"`
	// QuotaFree is what the destination's storage quota leaves, in
	// bytes; -1 without a quota.
	QuotaFree int64             `json:"quota_free"`
	SizeLimit int64             `json:"size_limit"` // the largest message the destination takes; 0: none known
	Oversize  []OversizeMessage `json:"oversize"`
	// Scripts is what an attempt would do with the Sieve scripts (Copied:
	// would be put; Refused: by the destination's check); nil when the
	// source names no ManageSieve.
	Scripts  *ScriptsEnd   `json:"scripts,omitempty"`
	Problems []PlanProblem `json:"problems"`
}

// PlannedFolder is one source folder of a plan.
type PlannedFolder struct {
	Source              string `json:"source"`
	Destination         string `json:"destination"`
	Role                string `json:"role"`
	Create              bool   `json:"create"`
	Wanted              string `json:"wanted"` // the name it would have had, when moved
	Moved               string `json:"moved"`  // why: collision or forbidden_name
	SourceMessages      int    `json:"source_messages"`
	SourceBytes         int64  `json:"source_bytes"`
	DestinationMessages int    `json:"destination_messages"`
	ToCopyBytes         int64  `json:"to_copy_bytes"`
	OversizeMessages    int    `json:"oversize_messages"`
	PreviousDestination string `json:"previous_destination"`
}

// OversizeMessage is a source message larger than the destination takes.
type OversizeMessage struct {
	Folder string `json:"folder"`
	UID    uint32 `json:"uid"`
	Size   int64  `json:"size"`
}

// PlanProblem is one thing a plan found in the way, in words. Blocking
// ones (quota, collision) keep the account out of a pass of a task that
// refuses blocked accounts.
type PlanProblem struct {
	Kind     string `json:"kind"`
	Blocking bool   `json:"blocking"`
	Folder   string `json:"folder"`
	Words    string `json:"words"`
}

// Blocking reports whether a problem of the plan blocks the account.
func (p AccountPlan) Blocking() bool {
	for _, problem := range p.Problems {
		if problem.Blocking {
			return true
		}
	}
	return false
}

// ErrPlanBlocked refuses a pass of a task that refuses blocked accounts
// when every account selected is blocked.
var ErrPlanBlocked = conflict("every selected account's plan has a blocking problem (quota, collision); see the task's plan")

// RefusedWords tell, after a run.started event's words, how many accounts
// the pass left out for their plan.
func RefusedWords(n int) string {
	return fmt.Sprintf("; %d %s left out: %s plan has a blocking problem", n, plural(n, "account", "accounts"), plural(n, "its", "their"))
}

// ErrLoginsRefused skips a scheduled or final pass whose every selected
// account's login a server refused: trying them again would only feed
// the server's lock-out.
var ErrLoginsRefused = conflict("every selected account's login was refused by a server at its last attempt or login test; " +
	"mend their credentials (or the endpoint), or run them by hand")

// LoginsRefusedWords tell, after a pass's start, how many accounts a
// scheduled or final pass left out for their refused logins.
func LoginsRefusedWords(n int) string {
	return fmt.Sprintf("; %d %s left out: a server refused %s login (mend the credentials, or run %s by hand)",
		n, plural(n, "account", "accounts"), plural(n, "its", "their"), plural(n, "it", "them"))
}

// PlanState is where an account's plan is.
type PlanState string

// The states of a plan.
const (
	PlanPending PlanState = "pending"
	PlanDone    PlanState = "done"
	PlanFailed  PlanState = "failed" // a side could not be read: Error says why
)

// PlanStates are every PlanState.
var PlanStates = []PlanState{PlanPending, PlanDone, PlanFailed}

// AccountPlanRecord is an account's newest plan: in brief (its figures
// and problems) in a task's listing, whole (Plan) when the account's plan
// is read alone.
type AccountPlanRecord struct {
	AccountID                     int64
	SourceLogin, DestinationLogin string
	State                         PlanState
	Blocking                      bool
	Error                         string
	RequestedAt                   time.Time
	PlannedAt                     *time.Time
	Figures                       PlanFigures
	Plan                          *AccountPlan // nil until done, and in a listing
}

// PlanFigures are a plan in brief, kept beside it so that a task's
// listing and sums need not read every plan's folders; zero (QuotaFree
// -1) until the plan is done.
type PlanFigures struct {
	Folders                  int
	SourceMessages           int
	SourceBytes, ToCopyBytes int64
	QuotaFree                int64
	Problems                 []PlanProblem
}

// Figures returns the plan in brief.
func (p AccountPlan) Figures() PlanFigures {
	return PlanFigures{Folders: len(p.Folders), SourceMessages: p.SourceMessages, SourceBytes: p.SourceBytes,
		ToCopyBytes: p.ToCopyBytes, QuotaFree: p.QuotaFree, Problems: p.Problems}
}

// PlanFilter selects the accounts a task's plan lists.
type PlanFilter string

// The filters of a task's plan.
const (
	PlanFilterAll      PlanFilter = "all"
	PlanFilterProblems PlanFilter = "problems" // failed, or a problem found, blocking or not
	PlanFilterBlocking PlanFilter = "blocking"
	PlanFilterFailed   PlanFilter = "failed"
	PlanFilterPending  PlanFilter = "pending"
)

// PlanFilters are the filters, in the API's order.
var PlanFilters = []PlanFilter{PlanFilterAll, PlanFilterProblems, PlanFilterBlocking, PlanFilterFailed, PlanFilterPending}

// MaxPlanPage is the most accounts a page of a task's plan lists.
const MaxPlanPage = 1000

// PlanQuery is a page of a task's plan: the accounts Filter selects,
// after the account After, at most Limit (0: all).
type PlanQuery struct {
	Filter PlanFilter
	After  int64
	Limit  int
}

func (q *PlanQuery) normalize() error {
	switch {
	case q.Filter == "":
		q.Filter = PlanFilterAll
	case !slices.Contains(PlanFilters, q.Filter):
		names := make([]string, len(PlanFilters))
		for i, f := range PlanFilters {
			names[i] = string(f)
		}
		return invalid("filter", "%.40q is not one of %s", q.Filter, strings.Join(names, ", "))
	}
	if q.After < 0 {
		return invalid("after", "must be an account id, 0 or more")
	}
	if q.Limit < 0 || q.Limit > MaxPlanPage {
		return invalid("limit", "must be from 1 to %d", MaxPlanPage)
	}
	return nil
}

// PlanSums are what a task's plans add up to, and what its ended passes
// that copied anything copied (PassesCopied bytes in PassesTook).
type PlanSums struct {
	Planned, Pending, Done, Failed int
	Blocked                        int // accounts whose plan has a blocking problem
	WithProblems                   int // failed, or a problem found
	SourceBytes, ToCopyBytes       int64
	PassesCopied                   int64
	PassesTook                     time.Duration
}

// Listed is how many accounts the filter selects.
func (s PlanSums) Listed(f PlanFilter) int {
	switch f {
	case PlanFilterProblems:
		return s.WithProblems
	case PlanFilterBlocking:
		return s.Blocked
	case PlanFilterFailed:
		return s.Failed
	case PlanFilterPending:
		return s.Pending
	}
	return s.Planned
}

// TaskPlan is a page of a task's plans and what all of them add up to.
type TaskPlan struct {
	Accounts []AccountPlanRecord // in brief
	Listed   int                 // the accounts the query's filter selects
	PlanSums
	// Rate is the bytes per second the task's ended passes copied, 0
	// before any; Estimate is ToCopyBytes at that rate (nil without one).
	Rate     float64
	Estimate *time.Duration
}

// AccountPlanJob plans one account. Generation is its plan's: only the
// job of the newest plan records one.
type AccountPlanJob struct {
	TaskID     int64 `json:"task_id"`
	AccountID  int64 `json:"account_id"`
	Generation int64 `json:"generation"`
}

// Kind implements river.JobArgs.
func (AccountPlanJob) Kind() string { return "account_plan" }

// PlanOutcome is what an AccountPlanJob found: a plan, or why none.
type PlanOutcome struct {
	TaskID, AccountID, Generation int64
	Plan                          *AccountPlan
	Error                         string
}

// PlanStore keeps plans.
type PlanStore interface {
	// PlansRequest makes a new plan of the task's accounts that filter
	// selects pending, queues their jobs, and says how many: ErrNotFound
	// for a missing task, ErrNoAccounts or ErrNoAccountSelected.
	PlansRequest(ctx context.Context, taskID int64, filter AccountFilter) (int, error)
	RecordPlan(ctx context.Context, outcome PlanOutcome) error
	// TaskPlans returns a page of the task's accounts' newest plans in
	// brief, by account id, and the sums of all (ErrNotFound for a
	// missing task).
	TaskPlans(ctx context.Context, taskID int64, q PlanQuery) ([]AccountPlanRecord, PlanSums, error)
	// AccountPlan returns the account's newest plan, whole: ErrNotFound
	// for a missing account, ErrNoPlan before its first.
	AccountPlan(ctx context.Context, taskID, accountID int64) (AccountPlanRecord, error)
}

// ErrNoPlan is an account's plan asked for before its first.
var ErrNoPlan = notFound("the account has no plan yet: plan it with POST /tasks/{id}/plan")

// PlanTask starts a plan of the task's accounts that filter selects (the
// zero filter: all) and returns how many. A plan reads both servers and
// changes neither; it runs beside whatever the task does.
func (s *Service) PlanTask(ctx context.Context, taskID int64, filter AccountFilter) (int, error) {
	if err := filter.normalize(); err != nil {
		return 0, err
	}
	return s.store.PlansRequest(ctx, taskID, filter)
}

// TaskPlan returns the sums of the newest plans of the task's accounts,
// an estimate of the copy at the rate the task's passes reached, and the
// page of the plans in brief that q asks for.
func (s *Service) TaskPlan(ctx context.Context, taskID int64, q PlanQuery) (TaskPlan, error) {
	if err := q.normalize(); err != nil {
		return TaskPlan{}, err
	}
	records, sums, err := s.store.TaskPlans(ctx, taskID, q)
	if err != nil {
		return TaskPlan{}, err
	}
	p := TaskPlan{Accounts: records, Listed: sums.Listed(q.Filter), PlanSums: sums}
	p.Rate, p.Estimate = sums.copyEstimate()
	return p, nil
}

// AccountPlan returns the account's newest plan, whole.
func (s *Service) AccountPlan(ctx context.Context, taskID, accountID int64) (AccountPlanRecord, error) {
	return s.store.AccountPlan(ctx, taskID, accountID)
}

// copyEstimate is the bytes per second the passes that ended copied, and
// the time what is left to copy takes at that rate (nil before a pass
// copied anything).
func (s PlanSums) copyEstimate() (float64, *time.Duration) {
	if s.PassesCopied == 0 || s.PassesTook <= 0 {
		return 0, nil
	}
	rate := float64(s.PassesCopied) / s.PassesTook.Seconds()
	estimate := time.Duration(float64(s.ToCopyBytes) / rate * float64(time.Second)).Round(time.Second)
	return rate, &estimate
}
