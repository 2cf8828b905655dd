package worker

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/persist"
	"github.com/mailmigrate/mailmigrate/internal/sides"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
)

// AccountPlan reads what an attempt of an account would do (transfer.Plan) and
// records it: a dry run, which changes neither server.
type AccountPlan struct {
	river.WorkerDefaults[migration.AccountPlanJob]
	store     AttemptStore
	lifecycle Lifecycle
	logger    *slog.Logger
	opts      Options
	logins    *sides.Logins
}

// Work plans one account. Whatever goes wrong ends up in the plan's error.
func (w *AccountPlan) Work(ctx context.Context, job *river.Job[migration.AccountPlanJob]) error {
	args := job.Args
	outcome := migration.PlanOutcome{TaskID: args.TaskID, AccountID: args.AccountID, Generation: args.Generation}
	plan, err := w.plan(ctx, args)
	if err != nil {
		outcome.Error = loginError(err)
	} else {
		outcome.Plan = &plan
	}
	return persist.Outcome(ctx, w.logger, func(ctx context.Context) error { return w.lifecycle.EndAccountPlan(ctx, outcome) })
}

func (w *AccountPlan) plan(ctx context.Context, args migration.AccountPlanJob) (migration.AccountPlan, error) {
	src, dst, _, err := accountSides(ctx, w.store, w.logins, args.TaskID, args.AccountID)
	if err != nil {
		return migration.AccountPlan{}, err
	}
	options, err := w.store.TaskOptions(ctx, args.TaskID)
	if err != nil {
		return migration.AccountPlan{}, err
	}
	plan, err := transfer.Plan(ctx, transfer.Job{Source: src, Destination: dst, Options: optionsOf(options),
		State: w.store.SyncState(args.AccountID), Logger: scrubbedLogger(w.logger, knownSecrets(src, dst)), Tuning: w.opts.Tuning})
	if err != nil {
		return migration.AccountPlan{}, err
	}
	return planOf(plan), nil
}

// planOf is the engine's plan in the domain's words.
func planOf(p transfer.AccountPlan) migration.AccountPlan {
	out := migration.AccountPlan{SourceCapabilities: orEmpty(p.SourceCapabilities), DestinationCapabilities: orEmpty(p.DestinationCapabilities),
		Folders: make([]migration.PlannedFolder, len(p.Folders)), Excluded: orEmpty(p.Excluded), SourceMessages: p.SourceMessages, SourceBytes: p.SourceBytes,
		ToCopyBytes: p.ToCopyBytes, DestinationMessages: p.DestinationMessages, QuotaFree: p.QuotaFree, SizeLimit: p.SizeLimit,
		Oversize: make([]migration.OversizeMessage, len(p.Oversize)), Problems: make([]migration.PlanProblem, len(p.Problems))}
	for i, f := range p.Folders {
		out.Folders[i] = migration.PlannedFolder{Source: f.Source, Destination: f.Destination, Role: f.Role, Create: f.Create,
			Wanted: f.Wanted, Moved: string(f.Moved), SourceMessages: f.SourceMessages, SourceBytes: f.SourceBytes,
			DestinationMessages: f.DestinationMessages, ToCopyBytes: f.ToCopyBytes, OversizeMessages: f.OversizeMessages,
			PreviousDestination: f.PreviousDestination}
	}
	for i, m := range p.Oversize {
		out.Oversize[i] = migration.OversizeMessage{Folder: m.Folder, UID: m.UID, Size: m.Size}
	}
	for i, problem := range p.Problems {
		out.Problems[i] = migration.PlanProblem{Kind: string(problem.Kind), Blocking: problem.Blocking, Folder: problem.Folder, Words: problem.Words}
	}
	out.Scripts = scriptsEndOf(p.Scripts)
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
