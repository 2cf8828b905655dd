package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// openSecretBox loads the key that seals mailbox passwords: from
// MAILMIGRATE_SECRET_KEY, else from the key file, which is created on the
// very first start. The key is then checked against the database, so that
// a wrong or lost key stops the start instead of yielding garbage later.
func openSecretBox(ctx context.Context, cfg config, pool *pgxpool.Pool, logger *slog.Logger) (*secret.Box, error) {
	key, err := loadSecretKey(ctx, cfg, pool, logger)
	if err != nil {
		return nil, err
	}
	box, err := secret.NewBox(key)
	if err != nil {
		return nil, err
	}
	if err := postgres.CheckSecretKey(ctx, pool, box); err != nil {
		return nil, err
	}
	return box, nil
}

func loadSecretKey(ctx context.Context, cfg config, pool *pgxpool.Pool, logger *slog.Logger) ([]byte, error) {
	if cfg.SecretKey != "" {
		key, err := secret.ParseKey(cfg.SecretKey)
		if err != nil {
			return nil, fmt.Errorf("MAILMIGRATE_SECRET_KEY: %w", err)
		}
		return key, nil
	}
	key, err := secret.ReadKeyFile(cfg.SecretKeyFile)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	sealedBefore, err := postgres.HasSecretKeyMarker(ctx, pool)
	if err != nil {
		return nil, err
	}
	if sealedBefore {
		return nil, fmt.Errorf("no secret key: %s does not exist and MAILMIGRATE_SECRET_KEY is not set, "+
			"but this database holds passwords sealed with a key; restore that key", cfg.SecretKeyFile)
	}
	key = secret.NewKey()
	if err := os.MkdirAll(filepath.Dir(cfg.SecretKeyFile), 0o700); err != nil {
		return nil, err
	}
	if err := secret.WriteKeyFile(cfg.SecretKeyFile, key); err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	logger.Warn("created a new secret key for mailbox passwords: back it up; without it the stored passwords are lost", "file", cfg.SecretKeyFile)
	return key, nil
}
