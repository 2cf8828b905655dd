package worker

import (
	"slices"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
)

// TestEngineAndDomainNameTheSameServerProblems: every problem the engine
// finds has the domain's words, and the domain waits for none it cannot.
func TestEngineAndDomainNameTheSameServerProblems(t *testing.T) {
	t.Parallel()
	engine := make([]string, len(transfer.ServerProblems))
	for i, p := range transfer.ServerProblems {
		engine[i] = string(p)
	}
	domain := make([]string, len(migration.ServerProblems))
	for i, p := range migration.ServerProblems {
		domain[i] = string(p)
	}
	if !slices.Equal(engine, domain) {
		t.Errorf("the engine's server problems %q, the domain's %q", engine, domain)
	}
}
