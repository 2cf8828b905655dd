package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mailmigrate/mailmigrate/gen/dbsqlc"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// webhookSecretLabel binds a task's sealed webhook secret to its row.
func webhookSecretLabel(taskID int64) string {
	return fmt.Sprintf("tasks/%d/webhook_secret", taskID)
}

// WebhookSet stores a task's webhook; an empty secret keeps the stored one.
func (s *Store) WebhookSet(ctx context.Context, taskID int64, w migration.Webhook) (migration.Webhook, error) {
	var sealed []byte
	if w.Secret != "" {
		sealed = s.box.Seal([]byte(w.Secret), webhookSecretLabel(taskID))
	}
	n, err := s.queries.WebhookSet(ctx, dbsqlc.WebhookSetParams{ID: taskID, Url: w.URL, Secret: sealed, Calls: string(w.Calls)})
	if err != nil {
		return migration.Webhook{}, err
	}
	if n == 0 {
		return migration.Webhook{}, migration.ErrNotFound
	}
	return migration.Webhook{URL: w.URL, SecretSet: true, Calls: w.Calls}, nil
}

// WebhookGet returns a task's webhook without its secret.
func (s *Store) WebhookGet(ctx context.Context, taskID int64) (migration.Webhook, error) {
	row, err := s.queries.WebhookGet(ctx, taskID)
	if err != nil {
		return migration.Webhook{}, interpretError(err)
	}
	return migration.Webhook{URL: row.WebhookUrl, SecretSet: row.WebhookSecret != nil, Calls: migration.WebhookCalls(row.WebhookCalls)}, nil
}

// WebhookTarget is where a task's webhook calls go, with its secret
// opened; migration.ErrNoWebhook without one.
func (s *Store) WebhookTarget(ctx context.Context, taskID int64) (migration.WebhookTarget, error) {
	row, err := s.queries.WebhookTarget(ctx, taskID)
	if err != nil {
		return migration.WebhookTarget{}, interpretError(err)
	}
	if row.WebhookUrl == "" || row.WebhookSecret == nil {
		return migration.WebhookTarget{}, migration.ErrNoWebhook
	}
	secret, err := s.box.Open(row.WebhookSecret, webhookSecretLabel(taskID))
	if err != nil {
		return migration.WebhookTarget{}, err
	}
	return migration.WebhookTarget{URL: row.WebhookUrl, Secret: migration.Password(secret), TaskName: row.Name}, nil
}

// WebhookRemove forgets a task's webhook and its secret.
func (s *Store) WebhookRemove(ctx context.Context, taskID int64) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		n, err := q.WebhookRemove(ctx, taskID)
		if err == nil && n == 0 {
			return migration.ErrNotFound
		}
		if err != nil {
			return err
		}
		return q.DeliveriesGiveUp(ctx, dbsqlc.DeliveriesGiveUpParams{TaskID: taskID, Channel: channelWebhook, Reason: "the task's webhook was removed"})
	})
}

// WebhookDeliveries is a task's webhook delivery log, newest first.
func (s *Store) WebhookDeliveries(ctx context.Context, taskID int64) ([]migration.WebhookDelivery, error) {
	return s.deliveries(ctx, taskID, channelWebhook)
}

// The channels of the delivery log.
const (
	channelWebhook = "webhook"
	channelMail    = "mail"
)

// deliveries is a task's delivery log on channel, newest first.
func (s *Store) deliveries(ctx context.Context, taskID int64, channel string) ([]migration.WebhookDelivery, error) {
	rows, err := s.queries.WebhookDeliveryList(ctx, dbsqlc.WebhookDeliveryListParams{TaskID: taskID, Channel: channel, MaxRows: migration.MaxWebhookDeliveries})
	if err != nil {
		return nil, err
	}
	if err := s.emptyOfATask(ctx, taskID, len(rows)); err != nil {
		return nil, err
	}
	out := make([]migration.WebhookDelivery, len(rows))
	for i, r := range rows {
		out[i] = migration.WebhookDelivery{ID: r.ID, EventSeq: r.EventSeq, Kind: migration.EventKind(r.Kind), State: r.State,
			Attempts: int(r.Attempts), LastStatus: int(r.LastStatus), LastError: r.LastError, CreatedAt: r.CreatedAt.Time,
			NextAttemptAt: r.NextAttemptAt.Time, FinishedAt: r.FinishedAt.Time}
	}
	return out, nil
}

// WebhookDeliveryClaim leases the oldest delivery due to the caller for
// lease; ok is false when none is due.
func (s *Store) WebhookDeliveryClaim(ctx context.Context, lease time.Duration) (d migration.DueDelivery, ok bool, err error) {
	row, ok, err := s.claim(ctx, channelWebhook, lease)
	if !ok {
		return migration.DueDelivery{}, false, err
	}
	d = migration.DueDelivery{Due: dueOf(row), Body: []byte(row.Body), URL: row.WebhookUrl}
	if row.WebhookSecret != nil {
		secret, err := s.box.Open(row.WebhookSecret, webhookSecretLabel(row.TaskID))
		if err != nil {
			return migration.DueDelivery{}, false, err
		}
		d.Secret = migration.Password(secret)
	}
	return d, true, nil
}

// WebhookDeliveryAttempted records how an attempt at a delivery went.
func (s *Store) WebhookDeliveryAttempted(ctx context.Context, id int64, a migration.DeliveryAttempt) error {
	return s.queries.WebhookDeliveryAttempted(ctx, dbsqlc.WebhookDeliveryAttemptedParams{ID: id, Status: int32(a.Status), Error: a.Error,
		State: a.State, NextAttemptAt: pgtype.Timestamptz{Time: a.NextAttempt, Valid: true}})
}

// createWebhookDeliveries owes the tasks' webhooks the appended events
// that call them (migration.WebhookKinds), in the events' transaction;
// appended are the events' seq and time, in the order of events.
func createWebhookDeliveries(ctx context.Context, q *dbsqlc.Queries, events []migration.Event, appended []dbsqlc.EventAppendRow) error {
	for i, e := range events {
		e.Seq, e.Time = appended[i].Seq, appended[i].Time.Time
		body := migration.WebhookBodyOf(e)
		if body == nil {
			continue
		}
		if err := q.WebhookDeliveryCreate(ctx, dbsqlc.WebhookDeliveryCreateParams{TaskID: e.TaskID, EventSeq: e.Seq,
			Kind: string(e.Kind), Body: body, PerAccount: e.Kind == migration.EventAccountFailed,
			ListsAccounts: slices.Contains(migration.WebhookPassEnds, e.Kind), NotCompletedStates: texts(migration.NotCompletedStates)}); err != nil {
			return err
		}
		if !slices.Contains(migration.MailKinds, e.Kind) {
			continue
		}
		if err := q.MailDeliveryCreate(ctx, dbsqlc.MailDeliveryCreateParams{TaskID: e.TaskID, EventSeq: e.Seq,
			Kind: string(e.Kind), Body: string(body)}); err != nil {
			return err
		}
	}
	return nil
}

// MailSet stores a task's recipients.
// With none, the mails still due are given up.
func (s *Store) MailSet(ctx context.Context, taskID int64, to []string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.queries.WithTx(tx)
		n, err := q.MailSet(ctx, dbsqlc.MailSetParams{ID: taskID, MailTo: to})
		if err == nil && n == 0 {
			return migration.ErrNotFound
		}
		if err != nil || len(to) > 0 {
			return err
		}
		return q.DeliveriesGiveUp(ctx, dbsqlc.DeliveriesGiveUpParams{TaskID: taskID, Channel: channelMail, Reason: "the task's recipients were removed"})
	})
}

// MailGet returns a task's recipients.
func (s *Store) MailGet(ctx context.Context, taskID int64) ([]string, error) {
	to, err := s.queries.MailGet(ctx, taskID)
	return to, interpretError(err)
}

// MailDeliveries is a task's mail log, newest first.
func (s *Store) MailDeliveries(ctx context.Context, taskID int64) ([]migration.WebhookDelivery, error) {
	return s.deliveries(ctx, taskID, channelMail)
}

// MailDeliveryClaim leases the oldest mail due to the caller for lease;
// ok is false when none is due.
func (s *Store) MailDeliveryClaim(ctx context.Context, lease time.Duration) (d migration.DueMail, ok bool, err error) {
	row, ok, err := s.claim(ctx, channelMail, lease)
	if !ok {
		return migration.DueMail{}, false, err
	}
	var body migration.WebhookBody
	if err := json.Unmarshal([]byte(row.Body), &body); err != nil {
		return migration.DueMail{}, false, fmt.Errorf("mail %d: %w", row.ID, err)
	}
	return migration.DueMail{Due: dueOf(row), Event: body.Event, To: row.MailTo}, true, nil
}

// claim leases the oldest delivery due on channel for lease; ok is false
// when none is due.
func (s *Store) claim(ctx context.Context, channel string, lease time.Duration) (dbsqlc.DeliveryClaimRow, bool, error) {
	row, err := s.queries.DeliveryClaim(ctx, dbsqlc.DeliveryClaimParams{LeaseSeconds: lease.Seconds(), Channel: channel})
	if errors.Is(err, pgx.ErrNoRows) {
		return row, false, nil
	}
	return row, err == nil, err
}

func dueOf(row dbsqlc.DeliveryClaimRow) migration.Due {
	return migration.Due{ID: row.ID, TaskID: row.TaskID, Kind: migration.EventKind(row.Kind), Attempts: int(row.Attempts)}
}
