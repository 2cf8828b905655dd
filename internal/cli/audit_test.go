package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestAuditFromTheCommandLine: what the CLI changed is in the trail that
// audit list prints, newest first, with its words; audit export writes
// the whole trail as CSV.
func TestAuditFromTheCommandLine(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{})
	u := newUser(t, svc)
	ep := u.id("endpoints", "create", "--host", "imap.old.example")
	u.ok("endpoints", "delete", ep)
	table := u.ok("audit", "list")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "Delete an endpoint that no task uses.") || !strings.Contains(lines[1], "done (204 No Content)") ||
		!strings.Contains(lines[2], "Register an IMAP server.") || !strings.Contains(lines[2], "/api/v1/endpoints") {
		t.Errorf("audit list:\n%s", table)
	}
	var entries []api.AuditEntry
	decodeJSON(t, u.ok("audit", "list", "--limit", "1", "--output", "json"), &entries)
	if len(entries) != 1 || entries[0].Method != "DELETE" {
		t.Fatalf("audit list --limit 1: %+v", entries)
	}
	var older []api.AuditEntry
	decodeJSON(t, u.ok("audit", "list", "--before", strconv.FormatInt(entries[0].Id, 10), "--output", "json"), &older)
	if len(older) != 1 || older[0].Method != "POST" {
		t.Errorf("audit list --before %d: %+v", entries[0].Id, older)
	}
	file := filepath.Join(t.TempDir(), "audit.csv")
	u.ok("audit", "export", "-o", file)
	csv, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(csv), "id,at,actor,remote,method,route,what,path,status,outcome,request_id\n") || strings.Count(string(csv), "\n") != 3 {
		t.Errorf("audit export: %v\n%s", err, csv)
	}
}
