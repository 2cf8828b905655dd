package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/sql/migrations"
)

// migrateLockKey serialises concurrent Migrate calls of several processes
// on one database (pg_advisory_lock).
const migrateLockKey = 0x6d61696c6d6967 // "mailmig"

type schemaMigration struct {
	version int
	name    string
	sql     string
}

// Migrate applies the embedded schema migrations that the database lacks,
// each in its own transaction, and reports how many it applied.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (applied int, err error) {
	all, err := loadMigrations()
	if err != nil {
		return 0, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return 0, fmt.Errorf("lock migrations: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey) //nolint:errcheck // the session ends with the connection anyway
	const createTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`
	if _, err := conn.Exec(ctx, createTable); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	latest, err := latestVersion(ctx, conn.Conn())
	if err != nil {
		return 0, err
	}
	for _, m := range all {
		if m.version <= latest {
			continue
		}
		if err := applyMigration(ctx, conn.Conn(), m); err != nil {
			return applied, err
		}
		applied++
	}
	return applied, migrateRiver(ctx, pool)
}

// Ready reports why the database cannot serve yet: unreachable, or its
// schema behind the migrations this binary embeds. Nil means ready.
func Ready(ctx context.Context, pool *pgxpool.Pool) error {
	all, err := loadMigrations()
	if err != nil {
		return err
	}
	var latest int
	err = pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&latest)
	if err != nil {
		return err
	}
	if want := all[len(all)-1].version; latest < want {
		return fmt.Errorf("database schema is at version %d, want %d: run mailmigrate migrate", latest, want)
	}
	return nil
}

func latestVersion(ctx context.Context, conn *pgx.Conn) (int, error) {
	var latest int
	err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&latest)
	return latest, err
}

func applyMigration(ctx context.Context, conn *pgx.Conn, m schemaMigration) error {
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
		return err
	})
	if err != nil {
		return fmt.Errorf("apply migration %s: %w", m.name, err)
	}
	return nil
}

func loadMigrations() ([]schemaMigration, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	all := make([]schemaMigration, 0, len(names))
	for _, name := range names {
		prefix, _, _ := strings.Cut(name, "_")
		version, err := strconv.Atoi(prefix)
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", name)
		}
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return nil, err
		}
		all = append(all, schemaMigration{version: version, name: name, sql: string(body)})
	}
	return all, nil
}
