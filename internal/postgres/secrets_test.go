package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

func addTask(t testing.TB, store *postgres.Store) int64 {
	t.Helper()
	ctx := context.Background()
	endpoint, err := store.EndpointCreate(ctx, migration.Endpoint{Host: "h", Port: 993, TLSMode: migration.TLSModeSSL})
	if err != nil {
		t.Fatal(err)
	}
	task, err := store.TaskCreate(ctx, migration.TaskSpec{SourceEndpointID: endpoint, DestinationEndpointID: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestPasswordsAreSealedPerRowAndSide(t *testing.T) {
	t.Parallel()
	store, pool, _ := newStore(t)
	ctx := context.Background()
	task := addTask(t, store)
	ids, err := store.AccountsAdd(ctx, task, []migration.AccountInput{
		{SourceLogin: "a", SourcePassword: "same", DestinationLogin: "a", DestinationPassword: "same"},
		{SourceLogin: "b", SourcePassword: "same", DestinationLogin: "b", DestinationPassword: "same"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, "SELECT source_password, destination_password FROM accounts ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var sealed [][]byte
	for rows.Next() {
		var src, dst []byte
		if err := rows.Scan(&src, &dst); err != nil {
			t.Fatal(err)
		}
		sealed = append(sealed, src, dst)
	}
	for i, a := range sealed {
		if bytes.Contains(a, []byte("same")) {
			t.Errorf("value %d holds the password in clear", i)
		}
		for j, b := range sealed[:i] {
			if bytes.Equal(a, b) {
				t.Errorf("values %d and %d are equal: the same password must not seal the same way twice", j, i)
			}
		}
	}
	for _, id := range ids {
		creds, err := store.AccountCredentials(ctx, task, id)
		if err != nil || string(creds.SourcePassword) != "same" || string(creds.DestinationPassword) != "same" {
			t.Errorf("account %d: %v %v", id, creds, err)
		}
	}
}

func TestSwappedCiphertextFailsToOpen(t *testing.T) {
	t.Parallel()
	store, pool, _ := newStore(t)
	ctx := context.Background()
	task := addTask(t, store)
	ids, err := store.AccountsAdd(ctx, task, []migration.AccountInput{
		{SourceLogin: "a", SourcePassword: "pw-a", DestinationLogin: "a", DestinationPassword: "dst-a"},
		{SourceLogin: "b", SourcePassword: "pw-b", DestinationLogin: "b", DestinationPassword: "dst-b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Copy b's sealed password over a's: an attacker with write access to
	// the table must not get a's login to use b's password.
	_, err = pool.Exec(ctx, `UPDATE accounts SET source_password = (SELECT source_password FROM accounts WHERE id = $2) WHERE id = $1`, ids[0], ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AccountCredentials(ctx, task, ids[0]); !errors.Is(err, secret.ErrOpen) {
		t.Errorf("row-swapped ciphertext: %v, want secret.ErrOpen", err)
	}
	// Across columns of one row, too.
	_, err = pool.Exec(ctx, `UPDATE accounts SET destination_password = source_password WHERE id = $1`, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AccountCredentials(ctx, task, ids[1]); !errors.Is(err, secret.ErrOpen) {
		t.Errorf("column-swapped ciphertext: %v, want secret.ErrOpen", err)
	}
}

func TestSecretKeyCheck(t *testing.T) {
	t.Parallel()
	_, pool, box := newStore(t)
	ctx := context.Background()
	if has, err := postgres.HasSecretKeyMarker(ctx, pool); err != nil || has {
		t.Fatalf("fresh database has a marker: %v %v", has, err)
	}
	if err := postgres.CheckSecretKey(ctx, pool, box); err != nil {
		t.Fatalf("first check: %v", err)
	}
	if has, _ := postgres.HasSecretKeyMarker(ctx, pool); !has {
		t.Error("no marker after the first check")
	}
	if err := postgres.CheckSecretKey(ctx, pool, box); err != nil {
		t.Errorf("same key again: %v", err)
	}
	other, _ := secret.NewBox(secret.NewKey())
	if err := postgres.CheckSecretKey(ctx, pool, other); !errors.Is(err, postgres.ErrWrongSecretKey) {
		t.Errorf("another key: %v, want ErrWrongSecretKey", err)
	}
}
