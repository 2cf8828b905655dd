package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestTheSchemaAndTheDomainAgree: the CHECK constraints that list a
// column's values hold exactly the domain's enumeration, so neither can
// gain or lose a state that the other does not know. (The OpenAPI file is
// compared with the same lists in internal/migration.)
func TestTheSchemaAndTheDomainAgree(t *testing.T) {
	t.Parallel()
	_, pool, _ := newStore(t)
	literal := regexp.MustCompile(`'([^']*)'`)
	for _, c := range []struct {
		table, column string
		domain        []string
	}{
		{"tasks", "state", texts(migration.TaskStates)},
		{"accounts", "state", texts(migration.AccountStates)},
		{"endpoints", "tls_mode", texts(migration.TLSModes)},
		{"endpoints", "sieve_tls_mode", texts(migration.TLSModes)},
		{"tasks", "webhook_calls", texts(migration.WebhookCallPolicies)},
		{"endpoints", "auth_method", texts(migration.AuthMethods)},
		{"endpoints", "master_form", texts(migration.MasterForms)},
		{"endpoints", "oauth2_grant", texts(migration.OAuth2Grants)},
		{"endpoints", "oauth2_mechanism", texts(migration.TokenMechanisms)},
		{"endpoints", "profile", texts(migration.Profiles)},
		{"accounts", "test_state", texts(migration.TestStates)},
		{"task_runs", "started_by", texts(migration.PassStarters)},
		{"account_plans", "state", texts(migration.PlanStates)},
		{"webhook_deliveries", "state", migration.DeliveryStates},
		{"users", "role", texts(migration.Roles)},
	} {
		// The check of one column, as PostgreSQL stores it, e.g.
		// CHECK ((state = ANY (ARRAY['idle'::text, ...])))
		var definition string
		err := pool.QueryRow(context.Background(), `
			SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
			JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
			WHERE c.conrelid = $1::regclass AND c.contype = 'c' AND a.attname = $2 AND cardinality(c.conkey) = 1`,
			c.table, c.column).Scan(&definition)
		if err != nil {
			t.Fatalf("the CHECK of %s.%s: %v", c.table, c.column, err)
		}
		var values []string
		for _, m := range literal.FindAllStringSubmatch(definition, -1) {
			values = append(values, m[1])
		}
		if slices.Sort(values); !slices.Equal(values, sorted(c.domain)) {
			t.Errorf("CHECK of %s.%s allows %q, the domain has %q", c.table, c.column, values, c.domain)
		}
	}
}

func texts[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

func sorted(values []string) []string {
	out := slices.Clone(values)
	slices.Sort(out)
	return out
}

// TestSQLStateLiteralsAreTheDomains: every state the hand-written queries
// compare or set by name (state = 'queued', state IN ('queued', …)) is a
// value of one of the domain's state lists, so that a state renamed or
// misspelled in SQL fails here rather than match no row in production.
func TestSQLStateLiteralsAreTheDomains(t *testing.T) {
	t.Parallel()
	states := map[string][]string{
		"state": slices.Concat(texts(migration.TaskStates), texts(migration.AccountStates),
			texts(migration.PlanStates), migration.DeliveryStates),
		"test_state": texts(migration.TestStates),
	}
	comparison := regexp.MustCompile(`\b(state|test_state)\s*(?:=|<>|!=|IN|NOT IN)\s*(\([^)]*\)|'[^']*')`)
	literal := regexp.MustCompile(`'([^']*)'`)
	files, err := filepath.Glob("../../sql/queries/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no query files: %v", err)
	}
	seen := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range comparison.FindAllStringSubmatch(string(data), -1) {
			for _, value := range literal.FindAllStringSubmatch(m[2], -1) {
				seen++
				if !slices.Contains(states[m[1]], value[1]) {
					t.Errorf("%s: %s compared with %q, which no domain list of states holds", filepath.Base(file), m[1], value[1])
				}
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d state literals found: the pattern no longer reads the queries", seen)
	}
}

// TestAccountStatesComeFromTheDomain: every statement that changes an
// account's state takes the state it moves to and the states it moves
// from as parameters, filled from the domain's moves (guard), so that no
// statement decides a transition of its own
// (docs/design.md#the-account-state-machine).
func TestAccountStatesComeFromTheDomain(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../sql/queries/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no query files: %v", err)
	}
	assigns := regexp.MustCompile(`(?:\bSET|,)\s*state\s*=`)
	target := regexp.MustCompile(`=\s*@(?:to_)?state\b`)
	moves := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, statement := range strings.Split(string(data), "-- name: ")[1:] {
			name, _, _ := strings.Cut(statement, " ")
			if !strings.Contains(statement, "UPDATE accounts") || !assigns.MatchString(statement) {
				continue
			}
			moves++
			if !target.MatchString(statement) {
				t.Errorf("%s (%s) sets an account's state that the domain did not give it", name, filepath.Base(file))
			}
			if !strings.Contains(statement, "@from_states") {
				t.Errorf("%s (%s) changes an account's state without the domain's guard (from_states)", name, filepath.Base(file))
			}
		}
	}
	if moves < 8 {
		t.Errorf("only %d statements change an account's state: the pattern no longer reads the queries", moves)
	}
}
