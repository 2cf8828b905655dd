package comparison

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// apiClients is how many clients BenchmarkAPIRequestCPU runs at once, as
// a console and scripts of a large operator would.
const apiClients = 200

// BenchmarkAPIRequestCPU measures what a request through the API costs
// the service with its PostgreSQL: apiClients clients at once each create
// two endpoints and a task, read them, list the tasks, change them and
// delete them, on the service as a user runs it (its own process, an API
// token). It reports the CPU time of the service and of PostgreSQL per
// request, beside the requests' wall time.
func BenchmarkAPIRequestCPU(b *testing.B) {
	s, err := launchService(b, buildService(b, b.TempDir()), b.TempDir(), 4)
	if err != nil {
		b.Fatal(err)
	}
	// A few tasks beside, so that a listing has something to read.
	for i := range 20 {
		if _, err := crudRound(context.Background(), s.client, fmt.Sprint("resident-", i), false); err != nil {
			b.Fatal(err)
		}
	}
	var requests atomic.Int64
	var serviceCPU, databaseCPU, wall time.Duration
	for b.Loop() {
		serviceBefore, databaseBefore, start := groupCPU(s.cmd.Process.Pid), postgresCPU(), time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, apiClients)
		for c := range apiClients {
			wg.Go(func() {
				n, err := crudRound(context.Background(), s.client, fmt.Sprintf("client-%d", c), true)
				requests.Add(int64(n))
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		wall += time.Since(start)
		serviceCPU += groupCPU(s.cmd.Process.Pid) - serviceBefore
		databaseCPU += postgresCPU() - databaseBefore
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	n := float64(requests.Load())
	b.ReportMetric(float64(serviceCPU.Microseconds())/n/1000, "service-CPU-ms/req")
	b.ReportMetric(float64(databaseCPU.Microseconds())/n/1000, "pg-CPU-ms/req")
	b.ReportMetric(float64((serviceCPU+databaseCPU).Microseconds())/n/1000, "CPU-ms/req")
	b.ReportMetric(n/wall.Seconds(), "req/s")
}

// crudRound creates two endpoints and a task named name, reads them,
// lists the tasks, changes them and, with cleanUp, deletes them; it
// returns how many requests it made.
func crudRound(ctx context.Context, c *api.ClientWithResponses, name string, cleanUp bool) (int, error) {
	n := 0
	check := func(resp interface{ StatusCode() int }, err error, want int, what string) error {
		n++
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if status := resp.StatusCode(); status != want {
			return fmt.Errorf("%s: status %d, want %d", what, status, want)
		}
		return nil
	}
	input := api.EndpointInput{Host: name + ".example", Port: 993, TlsMode: api.TLSModeSsl}
	endpoint, err := c.CreateEndpointWithResponse(ctx, input)
	if err := check(endpoint, err, http.StatusCreated, "create endpoint"); err != nil {
		return n, err
	}
	id := endpoint.JSON201.Id
	destination, err := c.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: name + ".new.example", Port: 993, TlsMode: api.TLSModeSsl})
	if err := check(destination, err, http.StatusCreated, "create endpoint"); err != nil {
		return n, err
	}
	destinationID := destination.JSON201.Id
	task, err := c.CreateTaskWithResponse(ctx, api.TaskInput{Name: name, SourceEndpointId: id, DestinationEndpointId: destinationID})
	if err := check(task, err, http.StatusCreated, "create task"); err != nil {
		return n, err
	}
	taskID := task.JSON201.Id
	got, err := c.GetEndpointWithResponse(ctx, id)
	if err := check(got, err, http.StatusOK, "get endpoint"); err != nil {
		return n, err
	}
	read, err := c.GetTaskWithResponse(ctx, taskID)
	if err := check(read, err, http.StatusOK, "get task"); err != nil {
		return n, err
	}
	list, err := c.ListTasksWithResponse(ctx)
	if err := check(list, err, http.StatusOK, "list tasks"); err != nil {
		return n, err
	}
	input.Port = 143
	input.TlsMode = api.TLSModeStarttls
	changed, err := c.UpdateEndpointWithResponse(ctx, id, input)
	if err := check(changed, err, http.StatusNoContent, "update endpoint"); err != nil {
		return n, err
	}
	renamed, err := c.UpdateTaskWithResponse(ctx, taskID, api.TaskInput{Name: name + " (renamed)", SourceEndpointId: id, DestinationEndpointId: destinationID})
	if err := check(renamed, err, http.StatusNoContent, "update task"); err != nil {
		return n, err
	}
	if !cleanUp {
		return n, nil
	}
	deleted, err := c.DeleteTaskWithResponse(ctx, taskID)
	if err := check(deleted, err, http.StatusNoContent, "delete task"); err != nil {
		return n, err
	}
	for _, endpoint := range []int64{id, destinationID} {
		gone, err := c.DeleteEndpointWithResponse(ctx, endpoint)
		if err := check(gone, err, http.StatusNoContent, "delete endpoint"); err != nil {
			return n, err
		}
	}
	return n, nil
}
