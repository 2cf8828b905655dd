package cli

import (
	"slices"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestTheCLIAndTheDomainAgree: the CLI is a client of the API and does
// not import the domain; the two facts of it that it keeps are the
// domain's.
func TestTheCLIAndTheDomainAgree(t *testing.T) {
	t.Parallel()
	var running []api.TaskState
	for _, s := range migration.RunningTaskStates {
		running = append(running, api.TaskState(s))
	}
	if !slices.Equal(runningStates, running) {
		t.Errorf("the CLI takes %v for running, the domain %v", runningStates, running)
	}
	if planPage != migration.MaxPlanPage {
		t.Errorf("the CLI reads plans %d at a time, the API gives at most %d", planPage, migration.MaxPlanPage)
	}
}
