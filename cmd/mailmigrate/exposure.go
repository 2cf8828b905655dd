package main

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/mailmigrate/mailmigrate/internal/cli"
)

// minAPITokenLength keeps guessable tokens out: 16 random characters are
// beyond any online guessing.
const minAPITokenLength = 16

// loadAPIToken returns the configured API token, read from its file when
// one is named, checked: long enough, and of the characters a bearer token
// may have (RFC 6750 §2.1 b64token), so that every client can send it.
func loadAPIToken(cfg config) (string, error) {
	token := cfg.APIToken
	if cfg.APITokenFile != "" {
		data, err := os.ReadFile(cfg.APITokenFile)
		if err != nil {
			return "", fmt.Errorf("API token file: %w", err)
		}
		if token = strings.TrimSpace(string(data)); token == "" {
			return "", fmt.Errorf("API token file %s is empty", cfg.APITokenFile)
		}
	}
	if token == "" {
		return "", nil
	}
	if len(token) < minAPITokenLength {
		return "", fmt.Errorf("API token is %d characters; use at least %d, e.g. from `openssl rand -hex 32`", len(token), minAPITokenLength)
	}
	if !isB64Token(token) {
		return "", fmt.Errorf("API token has characters a bearer token cannot carry; use letters, digits and -._~+/ only, e.g. from `openssl rand -hex 32`")
	}
	return token, nil
}

// isB64Token reports whether s matches RFC 6750's b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for _, c := range body {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("-._~+/", c):
		default:
			return false
		}
	}
	return true
}

// checkExposure says whether the service answers beyond this machine
// without authentication (--insecure-no-auth on an address other than
// loopback), for the warning; a listen address without a port is refused.
func checkExposure(listen string, insecureNoAuth bool) (exposed bool, err error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false, fmt.Errorf("listen address %q: %w", listen, err)
	}
	return insecureNoAuth && !cli.IsLoopbackHost(host), nil
}
