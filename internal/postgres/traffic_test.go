package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/postgres"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// TestTrafficBudgetHoldsAcrossProcesses: two stores on one database, as
// two processes, spend one mailbox's daily budget at once, a message at a
// time: together they take exactly what fits, and what another mailbox or
// direction spent does not count. Bytes of more than a day ago do not
// count; those of the last day decide when the mailbox has room again.
func TestTrafficBudgetHoldsAcrossProcesses(t *testing.T) {
	t.Parallel()
	first, pool, box := newStore(t)
	second := postgres.New(pool, box, migration.AttemptLimits{})
	ctx := context.Background()
	mailbox := provider.Mailbox{Server: "imap.gmail.com:993", Login: "ann@example.com"}
	if _, err := pool.Exec(ctx, `INSERT INTO mailbox_traffic (server, login, direction, hour, bytes) VALUES
		($1, $2, 'upload', date_trunc('hour', now()) - interval '30 hours', 1000),
		($1, $2, 'download', date_trunc('hour', now()), 1000),
		($1, 'bob@example.com', 'upload', date_trunc('hour', now()), 1000)`, mailbox.Server, mailbox.Login); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	taken := 0
	var wg sync.WaitGroup
	for _, store := range []*postgres.Store{first, second, first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				n, _, err := store.Traffic().Spend(ctx, mailbox, provider.Upload, []int64{10}, 105)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				taken += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if taken != 10 {
		t.Fatalf("the stores took %d messages of 10 bytes from a budget of 105, want 10", taken)
	}
	n, roomAt, err := second.Traffic().Spend(ctx, mailbox, provider.Upload, []int64{10}, 105)
	if err != nil || n != 0 {
		t.Fatalf("spend on a spent budget: %d, %v", n, err)
	}
	if wait := time.Until(roomAt); wait < 23*time.Hour || wait > 25*time.Hour {
		t.Errorf("room again in %v, want when this hour leaves the count (24 to 25 hours)", wait)
	}
	var stale int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM mailbox_traffic WHERE login = $1 AND hour < now() - interval '25 hours'`, mailbox.Login).Scan(&stale); err != nil || stale != 0 {
		t.Errorf("hours no budget counts are kept: %d rows (%v)", stale, err)
	}
}
