package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
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
