package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestEndpointDeleteRacingTaskCreates deletes endpoints while tasks that use
// them are being created. Every delete must answer deleted, in use or not
// found (never a store error), and no task may point at a deleted endpoint.
func TestEndpointDeleteRacingTaskCreates(t *testing.T) {
	t.Parallel()
	store, pool, _ := newStore(t)
	ctx := context.Background()
	spare, err := store.EndpointCreate(ctx, migration.Endpoint{Host: "spare", Port: 143, TLSMode: migration.TLSModePlain})
	if err != nil {
		t.Fatal(err)
	}
	var inUse, deleted int
	for round := range 60 {
		victim, err := store.EndpointCreate(ctx, migration.Endpoint{Host: "victim", Port: 143, TLSMode: migration.TLSModePlain})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var deleteErr error
		wg.Go(func() {
			_, err := store.TaskCreate(ctx, migration.TaskSpec{SourceEndpointID: victim, DestinationEndpointID: spare})
			var invalid *migration.InvalidError
			if err != nil && !errors.As(err, &invalid) {
				t.Errorf("round %d: task create: %v", round, err)
			}
		})
		wg.Go(func() { deleteErr = store.EndpointDelete(ctx, victim) })
		wg.Wait()
		var inUseErr *migration.EndpointInUseError
		switch {
		case deleteErr == nil:
			deleted++
		case errors.As(deleteErr, &inUseErr) && inUseErr.Tasks >= 1:
			inUse++
		default:
			t.Errorf("round %d: delete answered %v", round, deleteErr)
		}
	}
	var dangling int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = t.source_endpoint_id)`).Scan(&dangling)
	if err != nil || dangling != 0 {
		t.Errorf("%d tasks point at a deleted endpoint (%v)", dangling, err)
	}
	t.Logf("%d deletes won, %d were refused as in use", deleted, inUse)
}
