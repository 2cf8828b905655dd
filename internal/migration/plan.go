package migration

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A plan (dry run) of an account: what a run would do, read from both
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
	Problems  []PlanProblem     `json:"problems"`
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
// ones (quota, collision) keep the account out of a run of a task that
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

// ErrPlanBlocked refuses a run of a task that refuses blocked accounts
// when every account selected is blocked.
var ErrPlanBlocked = errors.New("every selected account's plan has a blocking problem (quota, collision); see the task's plan")

// RefusedWords tell, after a run.started event's words, how many accounts
// the run left out for their plan.
func RefusedWords(n int) string {
	return fmt.Sprintf("; %d %s left out: %s plan has a blocking problem", n, plural(n, "account", "accounts"), plural(n, "its", "their"))
}

// PlanState is where an account's plan is.
type PlanState string

// The states of a plan.
const (
	PlanPending PlanState = "pending"
	PlanDone    PlanState = "done"
	PlanFailed  PlanState = "failed" // a side could not be read: Error says why
)

// AccountPlanRecord is an account's newest plan.
type AccountPlanRecord struct {
	AccountID                     int64
	SourceLogin, DestinationLogin string
	State                         PlanState
	Blocking                      bool
	Error                         string
	RequestedAt                   time.Time
	PlannedAt                     *time.Time
	Plan                          *AccountPlan // nil until done
}

// TaskPlan is the plans of a task's accounts and what they add up to.
type TaskPlan struct {
	Accounts                 []AccountPlanRecord
	Pending, Done, Failed    int
	Blocked                  int // accounts whose plan has a blocking problem
	SourceBytes, ToCopyBytes int64
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
	// TaskPlans returns the task's accounts' newest plans, by account id.
	TaskPlans(ctx context.Context, taskID int64) ([]AccountPlanRecord, error)
}

// PlanTask starts a plan of the task's accounts that filter selects (the
// zero filter: all) and returns how many. A plan reads both servers and
// changes neither; it runs beside whatever the task does.
func (s *Service) PlanTask(ctx context.Context, taskID int64, filter AccountFilter) (int, error) {
	if err := filter.normalize(); err != nil {
		return 0, err
	}
	return s.store.PlansRequest(ctx, taskID, filter)
}

// TaskPlan returns the newest plans of the task's accounts, their sums,
// and an estimate of the copy at the rate the task's passes reached.
func (s *Service) TaskPlan(ctx context.Context, taskID int64) (TaskPlan, error) {
	records, err := s.store.TaskPlans(ctx, taskID)
	if err != nil {
		return TaskPlan{}, err
	}
	passes, err := s.store.TaskPasses(ctx, taskID)
	if err != nil {
		return TaskPlan{}, err
	}
	return TaskPlanOf(records, passes), nil
}

// TaskPlanOf adds up plans, with the rate of the passes that ended.
func TaskPlanOf(records []AccountPlanRecord, passes []Pass) TaskPlan {
	p := TaskPlan{Accounts: records}
	for _, r := range records {
		switch r.State {
		case PlanPending:
			p.Pending++
		case PlanFailed:
			p.Failed++
		case PlanDone:
			p.Done++
		}
		if r.Blocking {
			p.Blocked++
		}
		if r.Plan != nil {
			p.SourceBytes += r.Plan.SourceBytes
			p.ToCopyBytes += r.Plan.ToCopyBytes
		}
	}
	var copied int64
	var took time.Duration
	for _, pass := range passes {
		if pass.EndedAt != nil && pass.Figures.BytesCopied > 0 {
			copied += pass.Figures.BytesCopied
			took += pass.EndedAt.Sub(pass.StartedAt)
		}
	}
	if copied > 0 && took > 0 {
		p.Rate = float64(copied) / took.Seconds()
		estimate := time.Duration(float64(p.ToCopyBytes) / p.Rate * float64(time.Second)).Round(time.Second)
		p.Estimate = &estimate
	}
	return p
}
