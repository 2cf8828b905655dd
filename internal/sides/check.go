package sides

import (
	"context"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/transfer"
)

// checkStepTimeout bounds each step of an endpoint check (connecting,
// TLS, the greeting, a command): a person waits for the answer.
const checkStepTimeout = 4 * time.Second

// CheckEndpoint connects to e's server as configured, without logging in,
// and says in words what is wrong and what to do (POST
// /endpoints/{id}/check).
func CheckEndpoint(ctx context.Context, e migration.Endpoint) migration.EndpointCheck {
	start := time.Now()
	check := transfer.CheckServer(ctx, serverOf(e), checkStepTimeout)
	facts := migration.ServerFacts{Problem: migration.ServerProblem(check.Problem), Detail: check.Detail,
		Greeting: check.Greeting, Capabilities: check.Capabilities, Took: time.Since(start)}
	if t := check.TLS; t != nil {
		facts.TLS = &migration.TLSFacts{Version: t.Version, Subject: t.Subject, Issuer: t.Issuer,
			DNSNames: t.DNSNames, NotAfter: t.NotAfter, Verified: t.Verified}
	}
	return migration.CheckOf(e, facts)
}
