package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// TestDestinationPasswordFollowsTheSource: "the same as the source" is a
// link: fixing the source password fixes the destination's too, until a
// destination password of its own is given; a change of what a login uses
// outdates the last login test.
func TestDestinationPasswordFollowsTheSource(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "alice,wrong-pw\n")
	id := s.accountIDs(t, taskID)[0]
	ctx := context.Background()
	path := fmt.Sprintf("/tasks/%d/accounts/%d", taskID, id)
	check := func(step, wantSource, wantDestination string, linked bool) {
		t.Helper()
		creds, err := s.store.AccountCredentials(ctx, taskID, id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.client.GetAccountWithResponse(ctx, taskID, id)
		if err != nil || got.JSON200 == nil {
			t.Fatal(err)
		}
		if string(creds.SourcePassword) != wantSource || string(creds.DestinationPassword) != wantDestination || got.JSON200.DestinationPasswordSameAsSource != linked {
			t.Errorf("%s: passwords %q and %q, linked %v; want %q and %q, linked %v", step, creds.SourcePassword, creds.DestinationPassword,
				got.JSON200.DestinationPasswordSameAsSource, wantSource, wantDestination, linked)
		}
	}
	check("imported without a destination password", "wrong-pw", "wrong-pw", true)

	// A login test failed with the wrong password.
	if _, err := s.pool.Exec(ctx, `UPDATE accounts SET source_test_ok = false, source_test_error = 'authentication failed',
		source_tested_at = now() - interval '1 minute', destination_test_ok = false, destination_test_error = 'authentication failed',
		destination_tested_at = now() - interval '1 minute' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	outdated := func() bool {
		t.Helper()
		got, err := s.client.GetAccountWithResponse(ctx, taskID, id)
		if err != nil || got.JSON200 == nil || got.JSON200.SourceTest == nil || got.JSON200.DestinationTest == nil {
			t.Fatalf("account: %v %+v", err, got)
		}
		return got.JSON200.SourceTest.Outdated && got.JSON200.DestinationTest.Outdated
	}
	if outdated() {
		t.Error("a test is outdated before anything changed")
	}
	// Saving the same logins without a password changes nothing a login uses.
	if got := s.do(t, "PUT", path, `{"source_login":"alice"}`); got.status != http.StatusNoContent || outdated() {
		t.Errorf("saving unchanged: %d, outdated %v", got.status, outdated())
	}

	if got := s.do(t, "PUT", path, `{"source_login":"alice","source_password":"right-pw"}`); got.status != http.StatusNoContent {
		t.Fatalf("fix the source password: %d %s", got.status, got.body)
	}
	check("after fixing the source password", "right-pw", "right-pw", true)
	if !outdated() {
		t.Error("the login test from before the fix is not marked outdated")
	}

	if got := s.do(t, "PUT", path, `{"source_login":"alice","destination_password":"own-pw"}`); got.status != http.StatusNoContent {
		t.Fatalf("a destination password: %d %s", got.status, got.body)
	}
	check("with a destination password of its own", "right-pw", "own-pw", false)
	if got := s.do(t, "PUT", path, `{"source_login":"alice","source_password":"newer-pw"}`); got.status != http.StatusNoContent {
		t.Fatalf("change the source password: %d %s", got.status, got.body)
	}
	check("the source changes alone", "newer-pw", "own-pw", false)

	if got := s.do(t, "PUT", path, `{"source_login":"alice","destination_password_same_as_source":true}`); got.status != http.StatusNoContent {
		t.Fatalf("link again: %d %s", got.status, got.body)
	}
	check("linked again", "newer-pw", "newer-pw", true)
	wantText(t, s.do(t, "PUT", path, `{"source_login":"alice","destination_password":"x","destination_password_same_as_source":true}`),
		http.StatusBadRequest, "destination_password must be empty when destination_password_same_as_source is true")

	resp, err := s.client.CreateAccountWithResponse(ctx, taskID, api.AccountInput{SourceLogin: "bob", SourcePassword: "b", DestinationPassword: "b2"})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create bob: %v %v", err, resp)
	}
	if got, _ := s.client.GetAccountWithResponse(ctx, taskID, resp.JSON201.Id); got.JSON200 == nil || got.JSON200.DestinationPasswordSameAsSource {
		t.Errorf("bob with a destination password reads as linked: %+v", got.JSON200)
	}
}
