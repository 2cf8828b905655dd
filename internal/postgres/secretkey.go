package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// The marker that proves a key is the one the database's passwords were
// sealed with.
const (
	keyCheckPlaintext = "mailmigrate secret key check"
	keyCheckLabel     = "secret_key_check"
)

// ErrWrongSecretKey means the key does not open what the database holds.
var ErrWrongSecretKey = errors.New("the secret key does not match the one this database's passwords were sealed with: " +
	"set MAILMIGRATE_SECRET_KEY or restore the key file that was used before")

// HasSecretKeyMarker reports whether passwords were ever sealed with a key
// in this database, i.e. whether a fresh key would be wrong.
func HasSecretKeyMarker(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	_, err := dbsqlc.New(pool).SecretKeyCheckGet(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// CheckSecretKey verifies that box holds the database's key, sealing the
// marker with it on first use.
func CheckSecretKey(ctx context.Context, pool *pgxpool.Pool, box *secret.Box) error {
	q := dbsqlc.New(pool)
	if _, err := q.SecretKeyCheckCreate(ctx, box.Seal([]byte(keyCheckPlaintext), keyCheckLabel)); err != nil {
		return fmt.Errorf("secret key marker: %w", err)
	}
	// Read back whichever marker won: ours, or one already there.
	sealed, err := q.SecretKeyCheckGet(ctx)
	if err != nil {
		return fmt.Errorf("secret key marker: %w", err)
	}
	plaintext, err := box.Open(sealed, keyCheckLabel)
	if err != nil || string(plaintext) != keyCheckPlaintext {
		return ErrWrongSecretKey
	}
	return nil
}
