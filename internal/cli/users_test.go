package cli_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestUsersAndTokens: an admin adds a viewer from the shell and hands
// over the token it prints once; the viewer, with it, sees who they are,
// reads but cannot change, makes a token of their own and revokes it.
func TestUsersAndTokens(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t, servicetest.Options{APIToken: "admin-token-0123456789", DatabaseTokens: true})
	admin := newUser(t, svc)
	admin.env["MAILMIGRATE_API_TOKEN"] = "admin-token-0123456789"
	added := admin.ok("users", "add", "help-desk@example.com", "--role", "viewer")
	secret := regexp.MustCompile(`mmt_[0-9a-f]{64}`).FindString(added)
	if secret == "" || !strings.Contains(added, "help-desk@example.com (viewer)") || !strings.Contains(added, "shown this once") {
		t.Fatalf("users add printed:\n%s", added)
	}
	if got := admin.run("users", "add", "someone", "--role", "root"); got.code != 1 || !strings.Contains(got.stderr, "role must be viewer|operator|admin") {
		t.Errorf("users add --role root: exit %d, %q", got.code, got.stderr)
	}
	if listed := admin.ok("users", "list"); !strings.Contains(listed, "help-desk@example.com") || !strings.Contains(listed, "viewer") {
		t.Errorf("users list:\n%s", listed)
	}
	userID := regexp.MustCompile(`user (\d+), help-desk`).FindStringSubmatch(added)[1]
	if got := admin.run("users", "password", userID); got.code != 2 || !strings.Contains(got.stderr, "MAILMIGRATE_USER_PASSWORD") {
		t.Errorf("users password without one: exit %d, %q", got.code, got.stderr)
	}
	admin.stdin = "a long enough passphrase\n"
	admin.ok("users", "password", userID, "--password-file", "-")
	if _, err := svc.App.Service.SignIn(t.Context(), "help-desk@example.com", "a long enough passphrase"); err != nil {
		t.Errorf("signing in with the password set from the shell: %v", err)
	}

	viewer := newUser(t, svc)
	viewer.env["MAILMIGRATE_API_TOKEN"] = secret
	if me := viewer.ok("tokens", "whoami"); !strings.Contains(me, "help-desk@example.com (viewer)") {
		t.Errorf("tokens whoami:\n%s", me)
	}
	viewer.ok("tasks", "list")
	refused := viewer.run("endpoints", "create", "--host", "imap.old.example")
	if refused.code != 1 || !strings.Contains(refused.stderr, "forbidden: this needs the admin role; help-desk@example.com (viewer)") {
		t.Errorf("a viewer creates an endpoint: exit %d, %q", refused.code, refused.stderr)
	}
	var made struct {
		ID     int64  `json:"id"`
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(viewer.ok("tokens", "create", "laptop", "--expires-in-days", "7", "--output", "json")), &made); err != nil || made.Secret == "" {
		t.Fatalf("tokens create: %v %+v", err, made)
	}
	if listed := viewer.ok("tokens", "list"); !strings.Contains(listed, "laptop") || strings.Contains(listed, "mmt_") {
		t.Errorf("tokens list shows a secret, or not the new token:\n%s", listed)
	}
	viewer.ok("tokens", "revoke", strconv.FormatInt(made.ID, 10))
	viewer.env["MAILMIGRATE_API_TOKEN"] = made.Secret
	if got := viewer.run("tokens", "whoami"); got.code != 1 || !strings.Contains(got.stderr, "unauthorized") {
		t.Errorf("a revoked token: exit %d, %q", got.code, got.stderr)
	}
}
