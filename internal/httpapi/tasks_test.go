package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// newTask makes two endpoints and a task between them.
func (s *testService) newTask(t *testing.T) (taskID, sourceID, destinationID int64) {
	t.Helper()
	sourceID = s.createEndpoint(t, oldServer)
	destinationID = s.createEndpoint(t, api.EndpointInput{Host: "imap.new.example", TlsMode: api.TLSModeStarttls})
	resp, err := s.client.CreateTaskWithResponse(context.Background(), api.TaskInput{
		Name: "move", SourceEndpointId: sourceID, DestinationEndpointId: destinationID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create task: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201.Id, sourceID, destinationID
}

func (s *testService) setTaskState(t *testing.T, id int64, state migration.TaskState) {
	t.Helper()
	if err := s.store.TaskSetState(context.Background(), id, state); err != nil {
		t.Fatal(err)
	}
}

func TestCreateAndGetTask(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	src := s.createEndpoint(t, oldServer)
	dst := s.createEndpoint(t, oldServer)
	body := fmt.Sprintf(`{"name":"acme","source_endpoint_id":%d,"destination_endpoint_id":%d,
		"options":{"include_folders":["^INBOX"],"exclude_folders":["^Trash$"],"folder_map":{"Sent Items":"Sent"},
		"max_message_bytes":1048576,"since":"2024-01-31"}}`, src, dst)
	got := s.do(t, "POST", "/tasks", body)
	if got.status != http.StatusCreated || got.contentType != "application/json" {
		t.Fatalf("POST /tasks: %d %s", got.status, got.body)
	}
	list, err := s.client.ListTasksWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(*list.JSON200) != 1 {
		t.Fatalf("listed %d tasks", len(*list.JSON200))
	}
	task := (*list.JSON200)[0]
	if task.Name != "acme" || task.SourceEndpointId != src || task.DestinationEndpointId != dst || task.State != api.TaskStateIdle {
		t.Errorf("task %+v", task)
	}
	o := task.Options
	if o.ParallelAccounts != 4 || o.Since != "2024-01-31" || o.MaxMessageBytes != 1<<20 ||
		o.FolderMap["Sent Items"] != "Sent" || o.IncludeFolders[0] != "^INBOX" || o.ExcludeFolders[0] != "^Trash$" {
		t.Errorf("options %+v", o)
	}
	if task.Accounts.Total != 0 || task.StartedAt != nil || task.CreatedAt.IsZero() {
		t.Errorf("fresh task figures %+v", task)
	}
}

func TestListTasksIsEmptyArray(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	got := s.do(t, "GET", "/tasks", "")
	if got.status != http.StatusOK || strings.TrimSpace(got.body) != "[]" {
		t.Errorf("GET /tasks: %d %q", got.status, got.body)
	}
}

func TestTaskValidation(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	src := s.createEndpoint(t, oldServer)
	dst := s.createEndpoint(t, api.EndpointInput{Host: "imap.new.example", TlsMode: api.TLSModeSsl})
	ok := func(options string) string {
		return fmt.Sprintf(`{"source_endpoint_id":%d,"destination_endpoint_id":%d,"options":%s}`, src, dst, options)
	}
	for body, want := range map[string]string{
		`{"destination_endpoint_id":1}`:                                             "source_endpoint_id must name an endpoint",
		fmt.Sprintf(`{"source_endpoint_id":%d}`, src):                               "destination_endpoint_id must name an endpoint",
		fmt.Sprintf(`{"source_endpoint_id":%d,"destination_endpoint_id":999}`, src): "destination_endpoint_id names no endpoint",
		fmt.Sprintf(`{"source_endpoint_id":999,"destination_endpoint_id":%d}`, src): "source_endpoint_id names no endpoint",
		ok(`{"include_folders":["("]}`):                                             "options.include_folders pattern \"(\" does not compile: error parsing regexp: missing closing ): `(`",
		ok(`{"parallel_accounts":65}`):                                              "options.parallel_accounts must be between 1 and 64, or 0 for 4",
		ok(`{"max_message_bytes":-1}`):                                              "options.max_message_bytes must be 0 (no limit) or more",
		ok(`{"since":"31.01.2024"}`):                                                "options.since must be a date like 2024-01-31",
		ok(`{"folder_map":{"":"x"}}`):                                               `options.folder_map entry "" → "x": folder names must be non-empty UTF-8 of at most 1024 bytes without control characters`,
		fmt.Sprintf(`{"name":"%s","source_endpoint_id":%d,"destination_endpoint_id":%d}`, strings.Repeat("n", 1025), src, dst): "name must be at most 1024 bytes",
		fmt.Sprintf(`{"source_endpoint_id":%d,"destination_endpoint_id":%d}`, src, src):                                        "destination_endpoint_id must differ from source_endpoint_id (to move mailboxes within one server, register it twice)",
	} {
		wantText(t, s.do(t, "POST", "/tasks", body), http.StatusBadRequest, want)
	}
	wantText(t, s.do(t, "POST", "/tasks", `{"source_endpoint_id":"1"}`), http.StatusBadRequest, "bad json")
	wantText(t, s.do(t, "GET", "/tasks/x", ""), http.StatusBadRequest, "bad id")
	wantText(t, s.do(t, "GET", "/tasks/77", ""), http.StatusNotFound, "not found")
}

func TestUpdateTaskReplacesItsSpec(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	id, src, dst := s.newTask(t)
	body := fmt.Sprintf(`{"name":"renamed","source_endpoint_id":%d,"destination_endpoint_id":%d,"options":{"parallel_accounts":2}}`, dst, src)
	if got := s.do(t, "PUT", fmt.Sprintf("/tasks/%d", id), body); got.status != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", got.status, got.body)
	}
	task, _ := s.client.GetTaskWithResponse(context.Background(), id)
	if task.JSON200.Name != "renamed" || task.JSON200.SourceEndpointId != dst || task.JSON200.Options.ParallelAccounts != 2 {
		t.Errorf("after PUT: %+v", *task.JSON200)
	}
	wantText(t, s.do(t, "PUT", "/tasks/999", body), http.StatusNotFound, "not found")
}

func TestDeleteEndpointThatTasksUseIs409WithTheCount(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	_, src, dst := s.newTask(t)
	path := fmt.Sprintf("/endpoints/%d", src)
	wantText(t, s.do(t, "DELETE", path, ""), http.StatusConflict, "endpoint is used by 1 task")
	for range 2 { // as source and as destination
		body := fmt.Sprintf(`{"source_endpoint_id":%d,"destination_endpoint_id":%d}`, dst, src)
		if got := s.do(t, "POST", "/tasks", body); got.status != http.StatusCreated {
			t.Fatal(got)
		}
	}
	wantText(t, s.do(t, "DELETE", path, ""), http.StatusConflict, "endpoint is used by 3 tasks")
	if got := s.do(t, "GET", path, ""); got.status != http.StatusOK {
		t.Errorf("the endpoint is gone after a refused delete: %d", got.status)
	}
}

func TestDeleteTaskCascadesToItsAccounts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	id, src, _ := s.newTask(t)
	s.importCSV(t, id, "a@x,pw\nb@x,pw\n")
	if got := s.do(t, "DELETE", fmt.Sprintf("/tasks/%d", id), ""); got.status != http.StatusNoContent {
		t.Fatalf("DELETE task: %d %s", got.status, got.body)
	}
	var left int
	if err := s.pool.QueryRow(context.Background(), "SELECT count(*) FROM accounts WHERE task_id = $1", id).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d accounts outlived their task", left)
	}
	wantText(t, s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts", id), ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "DELETE", fmt.Sprintf("/tasks/%d", id), ""), http.StatusNotFound, "not found")
	// With its task gone, the endpoint can go too.
	if got := s.do(t, "DELETE", fmt.Sprintf("/endpoints/%d", src), ""); got.status != http.StatusNoContent {
		t.Errorf("DELETE endpoint after its task: %d %s", got.status, got.body)
	}
}

// TestRunningConditionRefusesChanges covers every write the running
// condition guards, in every running state, and shows that each finished
// state allows them again. While a migration runs (queued, running),
// accounts not in it can still be added and changed.
func TestRunningConditionRefusesChanges(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	id, src, dst := s.newTask(t)
	s.importCSV(t, id, "keep@x,pw\n")
	accountID := s.accountIDs(t, id)[0]
	taskPath := fmt.Sprintf("/tasks/%d", id)
	accountPath := fmt.Sprintf("%s/accounts/%d", taskPath, accountID)
	spec := fmt.Sprintf(`{"source_endpoint_id":%d,"destination_endpoint_id":%d}`, src, dst)

	added := 0
	for _, state := range migration.RunningTaskStates {
		s.setTaskState(t, id, state)
		wantText(t, s.do(t, "DELETE", taskPath, ""), http.StatusConflict, "task is running")
		wantText(t, s.do(t, "PUT", taskPath, spec), http.StatusConflict, "task is running")
		wantText(t, s.do(t, "DELETE", accountPath, ""), http.StatusConflict, "task is running")
		create := s.do(t, "POST", taskPath+"/accounts", fmt.Sprintf(`{"source_login":"new-%s@x","source_password":"pw"}`, state))
		imported := s.do(t, "POST", taskPath+"/accounts/import", fmt.Sprintf("csv-%s@x,pw\n", state))
		changed := s.do(t, "PUT", accountPath, `{"source_login":"keep@x"}`)
		if state.Migrating() {
			// The account is idle: not in the run.
			if create.status != http.StatusCreated || imported.status != http.StatusCreated || changed.status != http.StatusNoContent {
				t.Errorf("%s: add %d, import %d, change %d; want 201, 201, 204", state, create.status, imported.status, changed.status)
			}
			added += 2
			continue
		}
		wantText(t, create, http.StatusConflict, "task is running")
		wantText(t, imported, http.StatusConflict, "task is running")
		wantText(t, changed, http.StatusConflict, "task is running")
		// Reading is fine while running.
		if got := s.do(t, "GET", accountPath, ""); got.status != http.StatusOK {
			t.Errorf("%s: GET account: %d", state, got.status)
		}
	}
	if ids := s.accountIDs(t, id); len(ids) != 1+added {
		t.Fatalf("refused writes changed the accounts: %v", ids)
	}

	for i, state := range []migration.TaskState{migration.TaskIdle, migration.TaskCompleted, migration.TaskCompletedWithErrors, migration.TaskFailed, migration.TaskCanceled} {
		s.setTaskState(t, id, state)
		login := fmt.Sprintf("new%d@x", i)
		if got := s.do(t, "POST", taskPath+"/accounts", fmt.Sprintf(`{"source_login":%q,"source_password":"pw"}`, login)); got.status != http.StatusCreated {
			t.Errorf("%s: add account: %d %s", state, got.status, got.body)
		}
		if got := s.do(t, "PUT", taskPath, spec); got.status != http.StatusNoContent {
			t.Errorf("%s: PUT task: %d %s", state, got.status, got.body)
		}
	}
	if got := s.do(t, "DELETE", accountPath, ""); got.status != http.StatusNoContent {
		t.Errorf("delete account of a canceled task: %d %s", got.status, got.body)
	}
	if got := s.do(t, "DELETE", taskPath, ""); got.status != http.StatusNoContent {
		t.Errorf("delete canceled task: %d %s", got.status, got.body)
	}
}
