package servicetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// WaitTaskState polls the task through client until it is in state want,
// and returns it; it fails t after two minutes.
func WaitTaskState(t testing.TB, client *api.ClientWithResponses, taskID int64, want api.TaskState) api.Task {
	t.Helper()
	return WaitTask(t, client, taskID, func(task api.Task) error {
		if task.State != want {
			return fmt.Errorf("task %d is %s, want %s", taskID, task.State, want)
		}
		return nil
	})
}

// WaitTask polls the task through client until check accepts it, and
// returns it; it fails t with check's last error after two minutes.
func WaitTask(t testing.TB, client *api.ClientWithResponses, taskID int64, check func(api.Task) error) api.Task {
	t.Helper()
	var task api.Task
	testsupport.Eventually(t, 2*time.Minute, func() error {
		resp, err := client.GetTaskWithResponse(context.Background(), taskID)
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("get task %d: %v %v", taskID, err, resp)
		}
		task = *resp.JSON200
		return check(task)
	})
	return task
}

// ReadEventsUntil reads events from an event stream until one of kind
// arrives, and returns them all with the raw frames; it fails t, listing
// what came, when the stream is silent for two minutes or breaks.
func ReadEventsUntil(t testing.TB, conn *websocket.Conn, kind api.EventKind) ([]api.Event, string) {
	t.Helper()
	var events []api.Event
	var raw strings.Builder
	for {
		conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) //nolint:errcheck // a failed read says it
		_, frame, err := conn.ReadMessage()
		var e api.Event
		if err == nil {
			err = json.Unmarshal(frame, &e)
		}
		if err != nil {
			var told strings.Builder
			for _, e := range events {
				fmt.Fprintf(&told, "%d %s %d %s\n", e.Seq, e.Kind, e.AccountId, e.Message)
			}
			t.Fatalf("after %d events: %v\n%s", len(events), err, told.String())
		}
		raw.Write(frame)
		events = append(events, e)
		if e.Kind == kind {
			return events, raw.String()
		}
	}
}

// WaitTestsDone polls the task until its login test is no longer under
// way (a test never changes the task's state), and returns it.
func WaitTestsDone(t testing.TB, client *api.ClientWithResponses, taskID int64) api.Task {
	t.Helper()
	return WaitTask(t, client, taskID, func(task api.Task) error {
		if task.Tests.Running {
			return fmt.Errorf("task %d's login test is under way: %+v", taskID, task.Tests)
		}
		return nil
	})
}
