package migration

import (
	"context"
	"time"
)

// WorkStore applies the moves that jobs and the process's chores report:
// an account's attempt started, renewed or ended, a test or a plan ended,
// accounts of a dead process taken over, waiting accounts admitted. Each
// decides with the domain's rules (DecideAccount) inside its transaction.
type WorkStore interface {
	// AttemptStart moves the job's account to running, with what its
	// attempt needs; false when the job no longer holds the account.
	AttemptStart(ctx context.Context, job AttemptJob) (StartedAttempt, bool, error)
	// AttemptRenew renews a running account's lease and says whether
	// its job is to stop (its task, or it alone, is being canceled or
	// held).
	AttemptRenew(ctx context.Context, job AttemptJob) (stop bool, err error)
	// RecordAttempt ends an attempt with its outcome: the account ends,
	// retries, parks or is held, as DecideAccount says.
	RecordAttempt(ctx context.Context, outcome AttemptOutcome) error
	// RecordAccountTest ends one account's login test.
	RecordAccountTest(ctx context.Context, outcome AccountTestOutcome) error
	// Admit starts the waiting accounts that have room.
	Admit(ctx context.Context) error
	// RequeueLostAttempts queues again the accounts whose attempt's lease
	// expired (their process died), and ends its tests; it says how
	// many accounts it handled.
	RequeueLostAttempts(ctx context.Context, expiry time.Duration) (int, error)
	// SessionsPrune deletes the console sessions that ended.
	SessionsPrune(ctx context.Context) (int64, error)
}

// The jobs' and the loops' side of the service: every state their work
// moves goes through here, as every request's does through the methods
// the handlers call.

// StartAttempt starts the attempt of the job's account: false when the
// job no longer holds it (canceled, or taken over by another process).
func (s *Service) StartAttempt(ctx context.Context, job AttemptJob) (StartedAttempt, bool, error) {
	return s.store.AttemptStart(ctx, job)
}

// RenewAttempt keeps a running account's lease and says whether its
// attempt is to stop.
func (s *Service) RenewAttempt(ctx context.Context, job AttemptJob) (stop bool, err error) {
	return s.store.AttemptRenew(ctx, job)
}

// EndAttempt records what an attempt of an account did and moves the
// account on as its outcome says.
func (s *Service) EndAttempt(ctx context.Context, outcome AttemptOutcome) error {
	return s.store.RecordAttempt(ctx, outcome)
}

// EndAccountTest records one account's login test.
func (s *Service) EndAccountTest(ctx context.Context, outcome AccountTestOutcome) error {
	return s.store.RecordAccountTest(ctx, outcome)
}

// EndAccountPlan records what an account's plan found.
func (s *Service) EndAccountPlan(ctx context.Context, outcome PlanOutcome) error {
	return s.store.RecordPlan(ctx, outcome)
}

// AdmitWaiting starts the waiting accounts that have room: when a retry's
// delay ends, and as a safety net for accounts a crash left waiting.
func (s *Service) AdmitWaiting(ctx context.Context) error {
	return s.store.Admit(ctx)
}

// TakeOverLostAttempts queues again the accounts of processes whose leases
// expired, then admits what has room, and says how many accounts it took
// over. Every process calls it; row locks keep two from taking the same
// account.
func (s *Service) TakeOverLostAttempts(ctx context.Context, expiry time.Duration) (int, error) {
	n, err := s.store.RequeueLostAttempts(ctx, expiry)
	if err != nil {
		return n, err
	}
	return n, s.store.Admit(ctx)
}

// StartDuePasses starts the passes the tasks' schedules (final passes
// included) have due at the service's now, and says how many. Every
// process calls it; each slot starts one pass.
func (s *Service) StartDuePasses(ctx context.Context) (int, error) {
	return s.store.SchedulesStart(ctx, s.now())
}

// PruneRecords drops the audit trail's entries older than retention and
// the console sessions that ended, and says how many entries it dropped.
func (s *Service) PruneRecords(ctx context.Context, retention time.Duration) (int64, error) {
	n, err := s.store.AuditPrune(ctx, retention)
	if err != nil {
		return n, err
	}
	_, err = s.store.SessionsPrune(ctx)
	return n, err
}
