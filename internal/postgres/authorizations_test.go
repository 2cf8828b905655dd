package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
)

// TestBrowserAuthorizationIsTakenOnce: a browser authorization started in
// one process is finished by another (the same database), once; a newer
// one of the same account side replaces it, an expired one is gone, and
// the code verifier is not in the table in clear.
func TestBrowserAuthorizationIsTakenOnce(t *testing.T) {
	t.Parallel()
	first, pool, box := newStore(t)
	second := postgres.New(pool, box, migration.AttemptLimits{})
	ctx := context.Background()
	task, account := addAccount(t, first)
	start := func(store *postgres.Store, digest string, expires time.Time) migration.BrowserAuthorization {
		a := migration.BrowserAuthorization{StateDigest: []byte(digest), TaskID: task, AccountID: account, Side: "source",
			RedirectURI: "http://127.0.0.1:5000/", CodeVerifier: migration.Password("verifier-" + digest), ExpiresAt: expires}
		if err := store.AuthorizationStart(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	later := time.Now().Add(10 * time.Minute)
	start(first, "older", later)
	want := start(first, "newer", later)
	if _, err := second.AuthorizationTake(ctx, []byte("older")); !errors.Is(err, migration.ErrNotFound) {
		t.Errorf("the replaced authorization: %v, want not found", err)
	}
	var stored []byte
	if err := pool.QueryRow(ctx, `SELECT code_verifier FROM oauth_authorizations WHERE state_digest = $1`, []byte("newer")).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte("verifier-newer")) {
		t.Errorf("the code verifier is stored in clear")
	}
	got, err := second.AuthorizationTake(ctx, []byte("newer"))
	if err != nil || got.CodeVerifier != want.CodeVerifier || got.RedirectURI != want.RedirectURI || got.AccountID != account || got.Side != "source" {
		t.Fatalf("taken: %+v, %v", got, err)
	}
	if _, err := first.AuthorizationTake(ctx, []byte("newer")); !errors.Is(err, migration.ErrNotFound) {
		t.Errorf("taken twice: %v", err)
	}
	start(first, "expired", time.Now().Add(-time.Second))
	if _, err := second.AuthorizationTake(ctx, []byte("expired")); !errors.Is(err, migration.ErrNotFound) {
		t.Errorf("an expired authorization: %v, want not found", err)
	}
}
