// Package internal_test holds the rules on which package may import
// which, checked on what the packages import today.
package internal_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mailmigrate/mailmigrate/"

// importRules: a package (by its path in the module) and the imports it
// must not have, each with why. A prefix ending in "/" covers a tree.
var importRules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"internal/migration", []string{module + "internal/", module + "gen/", "github.com/jackc/", "github.com/go-chi/",
		"github.com/emersion/", "github.com/riverqueue/", "github.com/gorilla/", "net/http"},
		"the domain holds the rules and the interfaces it needs, and no adapter"},
	{"internal/transfer", []string{module + "internal/postgres", module + "gen/", "github.com/jackc/", "github.com/riverqueue/",
		module + "internal/httpapi", module + "internal/worker"},
		"the copy engine keeps its state through the interface it defines, not in the store"},
	{"internal/postgres", []string{module + "internal/transfer", module + "internal/worker", module + "internal/httpapi", "github.com/emersion/"},
		"storage keeps the engine's state and reads the providers' limits through the engine's data layers (transfer/syncstate, transfer/provider), never the engine itself"},
	{"internal/transfer/syncstate", []string{module + "internal/", module + "gen/", "github.com/", "net"},
		"the sync state is data: storage keeps it without the engine, IMAP or a database"},
	{"internal/transfer/sieve", []string{module + "internal/", module + "gen/", "github.com/jackc/", "github.com/riverqueue/", "github.com/emersion/go-imap"},
		"the ManageSieve client and the script reader know neither IMAP nor the engine"},
	{"internal/transfer/imapconn", []string{module + "internal/transfer/syncstate", module + "internal/transfer/sieve", module + "internal/migration",
		module + "internal/postgres", module + "gen/", "github.com/jackc/", "github.com/riverqueue/"},
		"the connection layer knows IMAP and the side it logs in to, not the sync algorithm, its state or the domain"},
	{"internal/progress", []string{module + "internal/", module + "gen/", "github.com/"},
		"the progress figures are data that every layer shares, and import nothing of theirs"},
	{"internal/transfer/provider", []string{module + "internal/", module + "gen/", "github.com/", "net"},
		"the provider layer is data and pure decisions, read by storage without the engine or IMAP"},
	{"internal/httpapi", []string{module + "gen/dbsqlc", module + "internal/postgres", "github.com/jackc/", module + "internal/transfer"},
		"handlers call the domain; they neither query nor copy"},
	{"internal/delivery", []string{module + "internal/postgres", module + "gen/", module + "internal/transfer", module + "internal/worker",
		"github.com/riverqueue/", "github.com/emersion/"},
		"the senders deliver what storage hands them, through the interfaces they define"},
	{"internal/oauth/signin", []string{module + "internal/postgres", module + "gen/", module + "internal/transfer", module + "internal/worker"},
		"a sign-in needs the protocol and the interfaces it defines, not storage or the engine"},
	{"internal/worker", []string{module + "internal/delivery", "net/smtp", "net/http"},
		"workers run the jobs; webhooks and mail go out from internal/delivery, the endpoint check from internal/sides"},
	{"internal/sides", []string{module + "internal/postgres", module + "gen/", module + "internal/httpapi", module + "internal/worker",
		"github.com/jackc/", "github.com/riverqueue/"},
		"the engine's sides are made from the domain's endpoints and accounts, without storage, jobs or HTTP"},
	{"internal/cli", []string{module + "internal/postgres", module + "gen/dbsqlc", module + "internal/httpapi", module + "internal/transfer", module + "internal/migration"},
		"the CLI is a client of the API"},
}

// sharedData are packages of plain data that every layer may import, the
// domain included; their own rule keeps them free of imports.
var sharedData = map[string]bool{module + "internal/progress": true}

// dbsqlcImporters may import the generated database code: storage alone.
var dbsqlcImporters = map[string]bool{"internal/postgres": true}

// TestImportRules fails when a package imports what its layer must not
// (go list's view of the build, tests left out).
func TestImportRules(t *testing.T) {
	t.Parallel()
	imports := packageImports(t)
	if len(imports) < 15 {
		t.Fatalf("go list found %d packages; is it run from the module?", len(imports))
	}
	for _, rule := range importRules {
		deps, ok := imports[rule.pkg]
		if !ok {
			t.Errorf("no package %s: mend the rule", rule.pkg)
		}
		for _, dep := range deps {
			if sharedData[dep] {
				continue
			}
			for _, bad := range rule.forbidden {
				if dep == strings.TrimSuffix(bad, "/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
					t.Errorf("%s imports %s: %s", rule.pkg, dep, rule.why)
				}
			}
		}
	}
	for pkg, deps := range imports {
		for _, dep := range deps {
			if dep == module+"gen/dbsqlc" && !dbsqlcImporters[pkg] {
				t.Errorf("%s imports gen/dbsqlc: the generated database code stays in storage (internal/postgres)", pkg)
			}
		}
	}
}

// packageImports maps each package of the module (by its path in the
// module) to its imports, from go list.
func packageImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports[strings.TrimPrefix(fields[0], module)] = fields[1:]
	}
	return imports
}

// TestDesignShowsTheImports: docs/design.md's import map is what go list
// says the packages import today, so the map cannot drift from the code.
func TestDesignShowsTheImports(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- imports -->\n", "<!-- /imports -->"
	_, rest, ok := strings.Cut(string(data), begin)
	shown, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/design.md lacks the markers %q and %q", begin, end)
	}
	if want := importMap(packageImports(t)); shown != want {
		t.Errorf("docs/design.md's import map differs from go list's; put this between its markers:\n%s", want)
	}
}

// importMap lists each package with the module's packages it imports,
// in Markdown; generated code and packages importing nothing of the
// module are left out as leaves.
func importMap(imports map[string][]string) string {
	var b strings.Builder
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		if strings.HasPrefix(pkg, "gen/") {
			continue
		}
		var ours []string
		for _, dep := range imports[pkg] {
			if strings.HasPrefix(dep, module) {
				ours = append(ours, "`"+strings.TrimPrefix(dep, module)+"`")
			}
		}
		if len(ours) > 0 {
			fmt.Fprintf(&b, "- `%s` → %s\n", pkg, strings.Join(ours, ", "))
		}
	}
	return b.String()
}
