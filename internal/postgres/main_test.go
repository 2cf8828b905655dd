package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func newStore(t testing.TB) (*postgres.Store, *pgxpool.Pool, *secret.Box) {
	t.Helper()
	pool := dbtest.Pool(t)
	box, err := secret.NewBox(secret.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	return postgres.New(pool, box, migration.AttemptLimits{}), pool, box
}
