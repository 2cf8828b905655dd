package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// EndpointCreate stores e and returns its id.
func (s *Store) EndpointCreate(ctx context.Context, e migration.Endpoint) (int64, error) {
	id, err := s.queries.EndpointIDReserve(ctx)
	if err != nil {
		return 0, interpretError(err)
	}
	err = s.queries.EndpointCreate(ctx, dbsqlc.EndpointCreateParams{
		ID:             id,
		RoleLabel:      e.RoleLabel,
		Host:           e.Host,
		Port:           int32(e.Port),
		TlsMode:        string(e.TLSMode),
		TlsSkipVerify:  e.TLSSkipVerify,
		AuthMethod:     string(cmp.Or(e.Auth.Method, migration.AuthPassword)),
		MasterLogin:    e.Auth.MasterLogin,
		MasterForm:     string(cmp.Or(e.Auth.MasterForm, migration.MasterAuthzid)),
		MasterPassword: s.sealMasterPassword(id, e.Auth),

		Oauth2Grant: string(cmp.Or(e.Auth.OAuth2.Grant, migration.GrantRefreshToken)), Oauth2TokenUrl: e.Auth.OAuth2.TokenURL,
		Oauth2ClientID: e.Auth.OAuth2.ClientID, Oauth2Scope: e.Auth.OAuth2.Scope,
		Oauth2Mechanism:    string(cmp.Or(e.Auth.OAuth2.Mechanism, migration.MechanismXOAuth2)),
		Oauth2ClientSecret: s.sealClientSecret(id, e.Auth),
		Oauth2DeviceUrl:    e.Auth.OAuth2.DeviceURL, Oauth2AuthorizationUrl: e.Auth.OAuth2.AuthorizationURL,
		Profile:         string(cmp.Or(e.Profile, migration.ProfileAuto)),
		MaxMessageBytes: e.Limits.MaxMessageBytes, DailyDownloadBytes: e.Limits.DailyDownloadBytes,
		DailyUploadBytes: e.Limits.DailyUploadBytes, MaxConnections: int32(e.Limits.Connections),
		MaxAccountConnections: int32(e.Limits.AccountConnections),
		SievePort:             int32(e.Sieve.Port), SieveTlsMode: string(cmp.Or(e.Sieve.TLSMode, migration.TLSModeSTARTTLS)),
	})
	return id, interpretError(err)
}

// sealClientSecret seals a's OAuth 2.0 client secret for endpoint id, or
// is nil (NULL) without one.
func (s *Store) sealClientSecret(id int64, a migration.EndpointAuth) []byte {
	if a.Method != migration.AuthOAuth2 || a.OAuth2.ClientSecret == "" {
		return nil
	}
	return s.box.Seal([]byte(a.OAuth2.ClientSecret), clientSecretLabel(id))
}

// clientSecretLabel binds a sealed client secret to its endpoint.
func clientSecretLabel(endpointID int64) string {
	return fmt.Sprintf("endpoints/%d/oauth2_client_secret", endpointID)
}

// sealMasterPassword seals a's master password for endpoint id, or is nil
// (NULL) without one.
func (s *Store) sealMasterPassword(id int64, a migration.EndpointAuth) []byte {
	if a.Method != migration.AuthMaster || a.MasterPassword == "" {
		return nil
	}
	return s.box.Seal([]byte(a.MasterPassword), masterPasswordLabel(id))
}

// masterPasswordLabel binds a sealed master password to its endpoint.
func masterPasswordLabel(endpointID int64) string {
	return fmt.Sprintf("endpoints/%d/master_password", endpointID)
}

// EndpointGet returns the endpoint with id.
func (s *Store) EndpointGet(ctx context.Context, id int64) (migration.Endpoint, error) {
	row, err := s.queries.EndpointGetByID(ctx, id)
	if err != nil {
		return migration.Endpoint{}, interpretError(err)
	}
	return endpointFromRow(row), nil
}

// TaskEndpoints returns the source and destination endpoints of a task.
func (s *Store) TaskEndpoints(ctx context.Context, taskID int64) (src, dst migration.Endpoint, err error) {
	row, err := s.queries.EndpointsOfTask(ctx, taskID)
	if err != nil {
		return src, dst, interpretError(err)
	}
	if src, err = s.endpointForLogin(row.Endpoint); err != nil {
		return src, dst, err
	}
	dst, err = s.endpointForLogin(row.Endpoint_2)
	return src, dst, err
}

// endpointForLogin is an endpoint with its master password and client
// secret opened, for logging in to it.
func (s *Store) endpointForLogin(row dbsqlc.Endpoint) (migration.Endpoint, error) {
	e := endpointFromRow(row)
	if row.MasterPassword != nil {
		password, err := s.box.Open(row.MasterPassword, masterPasswordLabel(row.ID))
		if err != nil {
			return e, fmt.Errorf("endpoint %d master password: %w", row.ID, err)
		}
		e.Auth.MasterPassword = migration.Password(password)
	}
	if row.Oauth2ClientSecret != nil {
		secret, err := s.box.Open(row.Oauth2ClientSecret, clientSecretLabel(row.ID))
		if err != nil {
			return e, fmt.Errorf("endpoint %d client secret: %w", row.ID, err)
		}
		e.Auth.OAuth2.ClientSecret = migration.Password(secret)
	}
	return e, nil
}

// EndpointList returns every endpoint in ascending id order.
func (s *Store) EndpointList(ctx context.Context) ([]migration.Endpoint, error) {
	rows, err := s.queries.EndpointList(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	endpoints := make([]migration.Endpoint, len(rows))
	for i, row := range rows {
		endpoints[i] = endpointFromRow(row)
	}
	return endpoints, nil
}

// EndpointUpdate replaces the record of e.ID, unless a running task uses
// it (ErrEndpointRunning).
func (s *Store) EndpointUpdate(ctx context.Context, e migration.Endpoint) error {
	return interpretError(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		if _, err := q.EndpointLock(ctx, e.ID); err != nil {
			return err
		}
		// A statement after the lock: it sees a task that started while
		// the lock was awaited.
		running, err := q.EndpointRunningTasks(ctx, dbsqlc.EndpointRunningTasksParams{ID: e.ID, RunningStates: runningStates()})
		if err != nil {
			return err
		}
		if running > 0 {
			return migration.ErrEndpointRunning
		}
		if _, err = q.EndpointUpdate(ctx, dbsqlc.EndpointUpdateParams{
			ID: e.ID, RoleLabel: e.RoleLabel, Host: e.Host, Port: int32(e.Port),
			TlsMode: string(e.TLSMode), TlsSkipVerify: e.TLSSkipVerify, Profile: string(cmp.Or(e.Profile, migration.ProfileAuto)),
			MaxMessageBytes: e.Limits.MaxMessageBytes, DailyDownloadBytes: e.Limits.DailyDownloadBytes,
			DailyUploadBytes: e.Limits.DailyUploadBytes, MaxConnections: int32(e.Limits.Connections),
			MaxAccountConnections: int32(e.Limits.AccountConnections),
			SievePort:             int32(e.Sieve.Port), SieveTlsMode: string(cmp.Or(e.Sieve.TLSMode, migration.TLSModeSTARTTLS)),
		}); err != nil {
			return err
		}
		// A server or a master login mended: the logins its tasks' servers
		// refused are worth trying again.
		if err := q.AccountsLoginRefusedClear(ctx, e.ID); err != nil || e.Auth.Method == "" {
			return err
		}
		o := e.Auth.OAuth2
		err = q.EndpointAuthUpdate(ctx, dbsqlc.EndpointAuthUpdateParams{
			ID: e.ID, AuthMethod: string(e.Auth.Method), MasterLogin: e.Auth.MasterLogin,
			MasterForm: string(cmp.Or(e.Auth.MasterForm, migration.MasterAuthzid)), MasterPassword: s.sealMasterPassword(e.ID, e.Auth),
			Oauth2Grant: string(cmp.Or(o.Grant, migration.GrantRefreshToken)), Oauth2TokenUrl: o.TokenURL, Oauth2ClientID: o.ClientID,
			Oauth2Scope: o.Scope, Oauth2Mechanism: string(cmp.Or(o.Mechanism, migration.MechanismXOAuth2)),
			Oauth2ClientSecret: s.sealClientSecret(e.ID, e.Auth), Oauth2DeviceUrl: o.DeviceURL, Oauth2AuthorizationUrl: o.AuthorizationURL,
		})
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.ConstraintName == "endpoints_master_complete":
			return migration.ErrMasterPasswordMissing
		case errors.As(err, &pgErr) && pgErr.ConstraintName == "endpoints_oauth2_complete":
			return migration.MissingClientSecret(e.Auth.OAuth2.Grant)
		}
		return err
	}))
}

// EndpointDelete deletes the endpoint with id unless tasks use it. A task
// created between the count and the delete trips the foreign key, which
// answers the same *EndpointInUseError.
func (s *Store) EndpointDelete(ctx context.Context, id int64) error {
	if err := s.refuseEndpointInUse(ctx, id); err != nil {
		return err
	}
	n, err := s.queries.EndpointDelete(ctx, id)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == foreignKeyViolation {
		if err := s.refuseEndpointInUse(ctx, id); err != nil {
			return err
		}
		return &migration.EndpointInUseError{Tasks: 1}
	}
	if err != nil {
		return interpretError(err)
	}
	if n == 0 {
		return migration.ErrNotFound
	}
	return nil
}

func (s *Store) refuseEndpointInUse(ctx context.Context, id int64) error {
	tasks, err := s.queries.TaskCountByEndpoint(ctx, id)
	if err != nil {
		return interpretError(err)
	}
	if tasks > 0 {
		return &migration.EndpointInUseError{Tasks: tasks}
	}
	return nil
}

func endpointFromRow(row dbsqlc.Endpoint) migration.Endpoint {
	e := migration.Endpoint{
		ID:            row.ID,
		RoleLabel:     row.RoleLabel,
		Host:          row.Host,
		Port:          int(row.Port),
		TLSMode:       migration.TLSMode(row.TlsMode),
		TLSSkipVerify: row.TlsSkipVerify,
		Profile:       migration.Profile(row.Profile),
		Limits: migration.EndpointLimits{MaxMessageBytes: row.MaxMessageBytes, DailyDownloadBytes: row.DailyDownloadBytes,
			DailyUploadBytes: row.DailyUploadBytes, Connections: int(row.MaxConnections), AccountConnections: int(row.MaxAccountConnections)},
		Sieve: migration.EndpointSieve{Port: int(row.SievePort), TLSMode: migration.TLSMode(row.SieveTlsMode)},
		Auth: migration.EndpointAuth{
			Method:            migration.AuthMethod(row.AuthMethod),
			MasterLogin:       row.MasterLogin,
			MasterForm:        migration.MasterForm(row.MasterForm),
			MasterPasswordSet: row.MasterPassword != nil,
		},
	}
	if e.Auth.Method == migration.AuthOAuth2 {
		e.Auth.OAuth2 = migration.OAuth2Settings{Grant: migration.OAuth2Grant(row.Oauth2Grant), TokenURL: row.Oauth2TokenUrl, DeviceURL: row.Oauth2DeviceUrl,
			AuthorizationURL: row.Oauth2AuthorizationUrl,
			ClientID:         row.Oauth2ClientID, Scope: row.Oauth2Scope, Mechanism: migration.TokenMechanism(row.Oauth2Mechanism),
			ClientSecretSet: row.Oauth2ClientSecret != nil}
	}
	return e
}

// TaskSecretNeeds says what a task's accounts must bring to log in on
// each side (its endpoints, read without opening their secrets).
func (s *Store) TaskSecretNeeds(ctx context.Context, taskID int64) (migration.SecretNeeds, error) {
	row, err := s.queries.EndpointsOfTask(ctx, taskID)
	if err != nil {
		return migration.SecretNeeds{}, interpretError(err)
	}
	return migration.SecretNeeds{Source: endpointFromRow(row.Endpoint).Auth.AccountSecret(),
		Destination: endpointFromRow(row.Endpoint_2).Auth.AccountSecret()}, nil
}
