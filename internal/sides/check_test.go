package sides

import (
	"slices"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
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

// TestEngineFailureKindsHaveAdvice: every kind of failure the engine
// names gets advice from the domain.
func TestEngineFailureKindsHaveAdvice(t *testing.T) {
	t.Parallel()
	blamed := migration.Party{Side: "destination", Login: "bob", Host: "imap.new.example", Port: 993}
	for _, kind := range []imapconn.Kind{imapconn.KindTransient, imapconn.KindAuth, imapconn.KindQuota, imapconn.KindPermanent} {
		if advice := migration.Advice(migration.FailureKind(kind.Name()), "", blamed); advice == "" {
			t.Errorf("no advice for the engine's %q", kind.Name())
		}
	}
	for _, p := range transfer.ServerProblems {
		if advice := migration.Advice(migration.FailureTransient, migration.ServerProblem(p), blamed); advice == "" {
			t.Errorf("no advice for the problem %q", p)
		}
	}
}
