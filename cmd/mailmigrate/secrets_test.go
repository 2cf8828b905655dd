package main

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

func TestSecretKeyLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.Pool(t)
	logger := slog.New(slog.DiscardHandler)
	keyFile := filepath.Join(t.TempDir(), "data", "secret.key")
	cfg := config{SecretKeyFile: keyFile}

	// First start: a key file appears, private to its owner.
	if _, err := openSecretBox(ctx, cfg, pool, logger); err != nil {
		t.Fatalf("first start: %v", err)
	}
	info, err := os.Stat(keyFile)
	if err != nil {
		t.Fatalf("no key file: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	firstKey, _ := os.ReadFile(keyFile)

	// Second start: the same key, the file untouched.
	if _, err := openSecretBox(ctx, cfg, pool, logger); err != nil {
		t.Fatalf("second start: %v", err)
	}
	if again, _ := os.ReadFile(keyFile); string(again) != string(firstKey) {
		t.Error("the key file changed on the second start")
	}

	// The key in the environment wins over the file; a wrong one stops the start.
	wrong := cfg
	wrong.SecretKey = base64.StdEncoding.EncodeToString(secret.NewKey())
	if _, err := openSecretBox(ctx, wrong, pool, logger); !errors.Is(err, postgres.ErrWrongSecretKey) {
		t.Errorf("wrong MAILMIGRATE_SECRET_KEY: %v, want ErrWrongSecretKey", err)
	}
	right := cfg
	right.SecretKey = strings.TrimSpace(string(firstKey))
	if _, err := openSecretBox(ctx, right, pool, logger); err != nil {
		t.Errorf("the file's key given in the environment: %v", err)
	}

	// A lost key file is not silently replaced once passwords were sealed.
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	_, err = openSecretBox(ctx, cfg, pool, logger)
	if err == nil || !strings.Contains(err.Error(), "no secret key") {
		t.Errorf("lost key file: %v, want a 'no secret key' error", err)
	}
	if _, statErr := os.Stat(keyFile); statErr == nil {
		t.Error("a new key file was written over the loss")
	}
}

func TestSecretKeyFromEnvironmentIsValidated(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	for value, want := range map[string]string{
		"not base64!": "MAILMIGRATE_SECRET_KEY: the key is not base64",
		base64.StdEncoding.EncodeToString([]byte("short")): "MAILMIGRATE_SECRET_KEY: the key is 5 bytes, want 32",
	} {
		_, err := openSecretBox(context.Background(), config{SecretKey: value}, pool, slog.New(slog.DiscardHandler))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("MAILMIGRATE_SECRET_KEY=%q: %v, want %q…", value, err, want)
		}
	}
}
