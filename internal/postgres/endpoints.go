package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// EndpointCreate stores e and returns its id.
func (s *Store) EndpointCreate(ctx context.Context, e migration.Endpoint) (int64, error) {
	id, err := s.queries.EndpointCreate(ctx, dbsqlc.EndpointCreateParams{
		RoleLabel:     e.RoleLabel,
		Host:          e.Host,
		Port:          int32(e.Port),
		TlsMode:       string(e.TLSMode),
		TlsSkipVerify: e.TLSSkipVerify,
	})
	return id, interpretError(err)
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
	return endpointFromRow(row.Endpoint), endpointFromRow(row.Endpoint_2), nil
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
		_, err = q.EndpointUpdate(ctx, dbsqlc.EndpointUpdateParams{
			ID: e.ID, RoleLabel: e.RoleLabel, Host: e.Host, Port: int32(e.Port),
			TlsMode: string(e.TLSMode), TlsSkipVerify: e.TLSSkipVerify,
		})
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
	return migration.Endpoint{
		ID:            row.ID,
		RoleLabel:     row.RoleLabel,
		Host:          row.Host,
		Port:          int(row.Port),
		TLSMode:       migration.TLSMode(row.TlsMode),
		TLSSkipVerify: row.TlsSkipVerify,
	}
}
