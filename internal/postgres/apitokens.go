package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
)

// apiTokenPrefix marks the service's tokens, so that a secret scanner (or
// a person) can tell one in a paste or a repository.
const apiTokenPrefix = "mmt_"

// APITokens are the API tokens the database holds, by their SHA-256 alone:
// a token is seen in clear once, when it is made.
type APITokens struct {
	queries *dbsqlc.Queries
	// known are the digests found valid, until when: every API request
	// asks, and the console polls, so a valid token is looked up once per
	// validTokenReuse, not once per request. A revocation or expiry takes
	// effect within that.
	mu    sync.Mutex
	known map[[sha256.Size]byte]knownToken
}

// knownToken is a token found valid, whose holder it names, until when.
type knownToken struct {
	holder string
	until  time.Time
}

// validTokenReuse is how long a token found valid is taken without asking
// the database again.
const validTokenReuse = 30 * time.Second

// NewAPITokens returns the tokens of the database pool is on.
func NewAPITokens(pool *pgxpool.Pool) *APITokens {
	return &APITokens{queries: dbsqlc.New(pool), known: map[[sha256.Size]byte]knownToken{}}
}

// Create makes a new random token named name, stores its digest and
// returns it in clear. It is made of letters, digits and `_`, so that a
// bearer header, a WebSocket subprotocol and a URL fragment carry it as it
// is.
func (t *APITokens) Create(ctx context.Context, name string) (string, error) {
	random := make([]byte, 32)
	rand.Read(random) // never fails (crypto/rand's documented contract)
	token := apiTokenPrefix + hex.EncodeToString(random)
	digest := sha256.Sum256([]byte(token))
	if _, err := t.queries.APITokenCreate(ctx, dbsqlc.APITokenCreateParams{Name: name, TokenSha256: digest[:]}); err != nil {
		return "", fmt.Errorf("store API token: %w", err)
	}
	return token, nil
}

// Holder names token's holder, "API token 3: <its name>", and reports
// whether it is one of the database's, neither revoked nor expired.
// Looking a digest up leaks nothing of the token through timing.
func (t *APITokens) Holder(ctx context.Context, token string) (string, bool, error) {
	digest := sha256.Sum256([]byte(token))
	now := time.Now()
	t.mu.Lock()
	known, ok := t.known[digest]
	t.mu.Unlock()
	if ok && now.Before(known.until) {
		return known.holder, true, nil
	}
	row, err := t.queries.APITokenHolder(ctx, digest[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	holder := fmt.Sprintf("API token %d: %s", row.ID, row.Name)
	t.mu.Lock()
	defer t.mu.Unlock()
	for d, k := range t.known {
		if now.After(k.until) {
			delete(t.known, d) // the map holds the tokens in use, no more
		}
	}
	t.known[digest] = knownToken{holder: holder, until: now.Add(validTokenReuse)}
	return holder, true, nil
}
