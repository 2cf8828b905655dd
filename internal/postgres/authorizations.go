package postgres

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// verifierLabel binds a sealed code verifier to its authorization.
func verifierLabel(stateDigest []byte) string {
	return "oauth_authorizations/" + hex.EncodeToString(stateDigest) + "/code_verifier"
}

// AuthorizationStart keeps a browser authorization until the browser comes
// back, in place of the account side's earlier one.
func (s *Store) AuthorizationStart(ctx context.Context, a migration.BrowserAuthorization) error {
	return interpretError(s.queries.AuthorizationStart(ctx, dbsqlc.AuthorizationStartParams{
		StateDigest: a.StateDigest, TaskID: a.TaskID, AccountID: a.AccountID, Side: a.Side, RedirectUri: a.RedirectURI,
		CodeVerifier: s.box.Seal([]byte(a.CodeVerifier), verifierLabel(a.StateDigest)),
		ExpiresAt:    pgtype.Timestamptz{Time: a.ExpiresAt, Valid: true}, AlsoAccept: a.AlsoAccept}))
}

// AuthorizationTake ends the browser authorization of a state digest and
// returns it: ErrNotFound when there is none, or it expired.
func (s *Store) AuthorizationTake(ctx context.Context, stateDigest []byte) (migration.BrowserAuthorization, error) {
	row, err := s.queries.AuthorizationTake(ctx, stateDigest)
	if err != nil {
		return migration.BrowserAuthorization{}, interpretError(err)
	}
	if time.Now().After(row.ExpiresAt.Time) {
		return migration.BrowserAuthorization{}, migration.ErrNotFound
	}
	verifier, err := s.box.Open(row.CodeVerifier, verifierLabel(row.StateDigest))
	if err != nil {
		return migration.BrowserAuthorization{}, err
	}
	return migration.BrowserAuthorization{StateDigest: row.StateDigest, TaskID: row.TaskID, AccountID: row.AccountID, Side: row.Side,
		RedirectURI: row.RedirectUri, CodeVerifier: migration.Password(verifier), ExpiresAt: row.ExpiresAt.Time, AlsoAccept: row.AlsoAccept}, nil
}
