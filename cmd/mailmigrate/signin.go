package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/internal/postgres"
)

// A service started without a configured token still asks for one, as
// Jupyter and Grafana do: it makes a token of its own, keeps its digest in
// the database and the token in the data dir (mode 0600, beside the secret
// key), where the CLI on the same machine finds it, and shows the operator
// a sign-in link that carries it in the URL's fragment, which browsers
// never send to a server.

// localTokenFileName is the file in the data dir that holds the token.
const localTokenFileName = "api-token"

// localTokenFile is where the client commands look for the token of a
// service on this machine: in the data dir serve would use.
func localTokenFile(getenv func(string) string) string {
	dataDir := getenv("MAILMIGRATE_DATA_DIR")
	if dataDir == "" {
		dataDir = defaultDataDir(getenv)
	}
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, localTokenFileName)
}

// localToken returns the token in the data dir's file, making and storing
// a new one when the file is missing or its token was revoked or expired.
func localToken(ctx context.Context, dataDir string, pool *pgxpool.Pool, logger *slog.Logger) (string, error) {
	if dataDir == "" {
		return "", errors.New("no API token: set MAILMIGRATE_API_TOKEN, or --data-dir for the token the service makes for itself")
	}
	file := filepath.Join(dataDir, localTokenFileName)
	tokens := postgres.NewAPITokens(pool)
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		token := strings.TrimSpace(string(data))
		_, valid, err := tokens.Principal(ctx, token)
		if err != nil || valid {
			return token, err
		}
		logger.Warn("the API token in the data dir is no longer valid; making a new one", "file", file)
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("API token file: %w", err)
	}
	token, err := tokens.Create(ctx, "made at the start of a service with the data dir "+dataDir)
	if err != nil {
		return "", err
	}
	if err := writePrivateFile(file, token+"\n"); err != nil {
		return "", fmt.Errorf("API token file: %w", err)
	}
	logger.Info("made an API token for this service; the CLI on this machine reads it from the file", "file", file)
	return token, nil
}

// writePrivateFile writes content to path, readable by its owner alone,
// whole or not at all.
func writePrivateFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path) // CreateTemp made it 0600
}

// signInURL is the console's address with the token in its fragment. An
// address on every interface is reached at loopback.
func signInURL(listenAddr net.Addr, token string) string {
	host, port, _ := net.SplitHostPort(listenAddr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/#token=" + token
}

// showSignIn prints the sign-in link to a person at a terminal. The log,
// which may go to a journal others read, names the file instead.
func showSignIn(stderr io.Writer, logger *slog.Logger, listenAddr net.Addr, token, dataDir string) {
	file := filepath.Join(dataDir, localTokenFileName)
	if !isTerminal(stderr) {
		logger.Info("sign in to the console with the API token in the data dir: open its address with #token=<the token> after it", "file", file)
		return
	}
	fmt.Fprintf(stderr, "\n  Open the console, signed in:\n\n    %s\n\n  The API token is in %s; the CLI on this machine reads it from there.\n\n",
		signInURL(listenAddr, token), file)
}
