package postgres

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// UserList lists the users, by name.
func (s *Store) UserList(ctx context.Context) ([]migration.User, error) {
	rows, err := s.queries.UserList(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	users := make([]migration.User, len(rows))
	for i, r := range rows {
		users[i] = migration.User{ID: r.ID, Name: r.Name, Role: migration.Role(r.Role), CreatedAt: r.CreatedAt.Time}
	}
	return users, nil
}

// UserCreate stores a user with its first token, in one transaction.
func (s *Store) UserCreate(ctx context.Context, in migration.UserInput, first migration.TokenInput) (migration.User, migration.NewAPIToken, error) {
	var user migration.User
	var token migration.NewAPIToken
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		row, err := q.UserCreate(ctx, dbsqlc.UserCreateParams{Name: in.Name, Role: string(in.Role)})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
			return migration.ErrUserExists
		}
		if err != nil {
			return err
		}
		user = migration.User{ID: row.ID, Name: in.Name, Role: in.Role, CreatedAt: row.CreatedAt.Time}
		token, err = createToken(ctx, q, user.ID, first.Name, time.Now().Add(first.Lifetime))
		token.UserName = user.Name
		return err
	})
	return user, token, interpretError(err)
}

// UserDelete deletes a user and, by cascade, its tokens.
func (s *Store) UserDelete(ctx context.Context, id int64) error {
	n, err := s.queries.UserDelete(ctx, id)
	s.tokens.forget()
	if err == nil && n == 0 {
		return migration.ErrNotFound
	}
	return interpretError(err)
}

// TokenList lists the tokens of userID, or everyone's when 0, newest first.
func (s *Store) TokenList(ctx context.Context, userID int64) ([]migration.APIToken, error) {
	rows, err := s.queries.APITokenList(ctx, userID)
	if err != nil {
		return nil, interpretError(err)
	}
	tokens := make([]migration.APIToken, len(rows))
	for i, r := range rows {
		tokens[i] = migration.APIToken{ID: r.ID, Name: r.Name, UserID: r.UserID.Int64, UserName: r.UserName,
			CreatedAt: r.CreatedAt.Time, ExpiresAt: r.ExpiresAt.Time, RevokedAt: r.RevokedAt.Time}
	}
	return tokens, nil
}

// TokenCreate makes a personal token of userID.
func (s *Store) TokenCreate(ctx context.Context, userID int64, in migration.TokenInput) (migration.NewAPIToken, error) {
	token, err := createToken(ctx, s.queries, userID, in.Name, time.Now().Add(in.Lifetime))
	return token, interpretError(err)
}

// TokenRevoke revokes a token of userID (anyone's when 0).
func (s *Store) TokenRevoke(ctx context.Context, id, userID int64) error {
	n, err := s.queries.APITokenRevoke(ctx, dbsqlc.APITokenRevokeParams{ID: id, UserID: userID})
	s.tokens.forget()
	if err == nil && n == 0 {
		return migration.ErrNotFound
	}
	return interpretError(err)
}

// sessionCookiePrefix marks a session's cookie, as apiTokenPrefix marks a
// token.
const sessionCookiePrefix = "mms_"

// decoyDigest is checked against when no user has the name given, so
// that a wrong name takes as long to refuse as a wrong password.
var decoyDigest = sync.OnceValue(func() string { return secret.HashPassword("no user has this password") })

// UserPasswordSet stores the digest of a user's password.
func (s *Store) UserPasswordSet(ctx context.Context, id int64, password string) error {
	n, err := s.queries.UserPasswordSet(ctx, dbsqlc.UserPasswordSetParams{ID: id,
		PasswordDigest: pgtype.Text{String: secret.HashPassword(password), Valid: true}})
	if err == nil && n == 0 {
		return migration.ErrNotFound
	}
	return interpretError(err)
}

// SignIn checks name's password under the user's lock, counts a wrong
// one toward policy's lock-out, and opens a session on the right one.
func (s *Store) SignIn(ctx context.Context, name, password string, policy migration.SignInPolicy) (migration.Session, error) {
	var session migration.Session
	// refused is the sign-in's refusal, returned after the transaction
	// that counted it commits.
	var refused error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		user, err := q.UserSignInFacts(ctx, name)
		if errors.Is(err, pgx.ErrNoRows) {
			secret.CheckPassword(decoyDigest(), password) //nolint:errcheck // only its time counts
			refused = migration.ErrSignInRefused
			return nil
		}
		if err != nil {
			return err
		}
		if user.LockedUntil.Valid && user.LockedUntil.Time.After(time.Now()) {
			refused = &migration.SignInLockedError{Until: user.LockedUntil.Time}
			return nil
		}
		digest := cmp.Or(user.PasswordDigest, decoyDigest())
		if ok, err := secret.CheckPassword(digest, password); err != nil || !ok || user.PasswordDigest == "" {
			locked, err := q.UserSignInFailed(ctx, dbsqlc.UserSignInFailedParams{ID: user.ID, Failures: int32(policy.Failures),
				LockSeconds: policy.Lockout.Seconds()})
			if err != nil {
				return err
			}
			refused = migration.ErrSignInRefused
			if locked.Valid && locked.Time.After(time.Now()) {
				refused = &migration.SignInLockedError{Until: locked.Time}
			}
			return nil
		}
		if err := q.UserSignInSucceeded(ctx, user.ID); err != nil {
			return err
		}
		session = migration.Session{Cookie: sessionCookiePrefix + randomHex(32), CSRF: randomHex(32),
			ExpiresAt: time.Now().Add(policy.Lifetime),
			Principal: migration.Principal{UserID: user.ID, UserName: name, Role: migration.Role(user.Role)}}
		digestOfCookie := sha256.Sum256([]byte(session.Cookie))
		return q.SessionCreate(ctx, dbsqlc.SessionCreateParams{CookieSha256: digestOfCookie[:], UserID: user.ID,
			CsrfToken: session.CSRF, ExpiresAt: pgtype.Timestamptz{Time: session.ExpiresAt, Valid: true}})
	})
	if err != nil || refused != nil {
		return migration.Session{}, cmp.Or(refused, interpretError(err))
	}
	return session, nil
}

// SignOut deletes the session of cookie.
func (s *Store) SignOut(ctx context.Context, cookie string) error {
	digest := sha256.Sum256([]byte(cookie))
	return interpretError(s.queries.SessionDelete(ctx, digest[:]))
}

// SessionsPrune deletes the sessions that ended, and counts them.
func (s *Store) SessionsPrune(ctx context.Context) (int64, error) {
	n, err := s.queries.SessionsPrune(ctx)
	return n, interpretError(err)
}
