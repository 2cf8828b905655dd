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
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
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

// knownToken is a token found valid, whose principal it is, until when.
type knownToken struct {
	principal migration.Principal
	until     time.Time
}

// validTokenReuse is how long a token found valid is taken without asking
// the database again.
const validTokenReuse = 30 * time.Second

// NewAPITokens returns the tokens of the database pool is on.
func NewAPITokens(pool *pgxpool.Pool) *APITokens {
	return &APITokens{queries: dbsqlc.New(pool), known: map[[sha256.Size]byte]knownToken{}}
}

// Create makes a new random token of the service's own, named name (an
// admin's, of no user), stores its digest and returns it in clear.
func (t *APITokens) Create(ctx context.Context, name string) (string, error) {
	made, err := createToken(ctx, t.queries, 0, name, time.Time{})
	return made.Secret, err
}

// forget drops every token found valid, so that the next request of each
// asks the database again.
func (t *APITokens) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.known)
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	random := make([]byte, n)
	rand.Read(random) // never fails (crypto/rand's documented contract)
	return hex.EncodeToString(random)
}

// createToken makes a new random token named name, of userID (0: the
// service's own), that expires at expires (zero: never), stores its
// digest and returns it with its secret in clear. The secret is made of
// letters, digits and `_`, so that a bearer header, a WebSocket
// subprotocol and a URL fragment carry it as it is.
func createToken(ctx context.Context, q *dbsqlc.Queries, userID int64, name string, expires time.Time) (migration.NewAPIToken, error) {
	secret := apiTokenPrefix + randomHex(32)
	digest := sha256.Sum256([]byte(secret))
	row, err := q.APITokenCreate(ctx, dbsqlc.APITokenCreateParams{Name: name, TokenSha256: digest[:],
		ExpiresAt: pgtype.Timestamptz{Time: expires, Valid: !expires.IsZero()}, UserID: pgtype.Int8{Int64: userID, Valid: userID != 0}})
	if err != nil {
		return migration.NewAPIToken{}, fmt.Errorf("store API token: %w", err)
	}
	return migration.NewAPIToken{Secret: secret, APIToken: migration.APIToken{ID: row.ID, Name: name, UserID: userID,
		CreatedAt: row.CreatedAt.Time, ExpiresAt: expires}}, nil
}

// Principal is whose token is, and reports whether it is one of the
// database's, neither revoked nor expired. A token of no user is the
// service's own, an admin's. Looking a digest up leaks nothing of the
// token through timing.
func (t *APITokens) Principal(ctx context.Context, token string) (migration.Principal, bool, error) {
	digest := sha256.Sum256([]byte(token))
	now := time.Now()
	t.mu.Lock()
	known, ok := t.known[digest]
	t.mu.Unlock()
	if ok && now.Before(known.until) {
		return known.principal, true, nil
	}
	row, err := t.queries.APITokenHolder(ctx, digest[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return migration.Principal{}, false, nil
	}
	if err != nil {
		return migration.Principal{}, false, err
	}
	principal := migration.Principal{TokenID: row.ID, TokenName: row.Name, UserID: row.UserID.Int64,
		UserName: row.UserName, Role: migration.Role(row.Role)}
	if !row.UserID.Valid {
		principal.Role = migration.RoleAdmin
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for d, k := range t.known {
		if now.After(k.until) {
			delete(t.known, d) // the map holds the tokens in use, no more
		}
	}
	t.known[digest] = knownToken{principal: principal, until: now.Add(validTokenReuse)}
	return principal, true, nil
}

// Session is whose console session cookie opens, and the CSRF token its
// state-changing requests must carry; false for no session, or one that
// ended. It asks the database every time: a sign-out ends it at once.
func (t *APITokens) Session(ctx context.Context, cookie string) (migration.Principal, string, bool, error) {
	digest := sha256.Sum256([]byte(cookie))
	row, err := t.queries.SessionHolder(ctx, digest[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return migration.Principal{}, "", false, nil
	}
	if err != nil {
		return migration.Principal{}, "", false, err
	}
	return migration.Principal{UserID: row.UserID, UserName: row.UserName, Role: migration.Role(row.Role),
		TokenName: fmt.Sprintf("console session %d", row.ID)}, row.CsrfToken, true, nil
}
