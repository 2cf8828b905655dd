package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

func (s *testService) importCSV(t *testing.T, taskID int64, csv string) {
	t.Helper()
	got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/accounts/import", taskID), csv)
	if got.status != http.StatusCreated {
		t.Fatalf("import: %d %s", got.status, got.body)
	}
}

func (s *testService) accountIDs(t *testing.T, taskID int64) []int64 {
	t.Helper()
	resp, err := s.client.ListAccountsWithResponse(context.Background(), taskID, nil)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("list accounts: %v %v", err, resp)
	}
	ids := make([]int64, len(*resp.JSON200))
	for i, a := range *resp.JSON200 {
		ids[i] = a.Id
	}
	return ids
}

func TestCreateAccountDefaultsTheDestination(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	resp, err := s.client.CreateAccountWithResponse(context.Background(), taskID, api.AccountInput{
		SourceLogin: " alice@old.example ", SourcePassword: "s3cret",
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode(), resp.Body)
	}
	id := resp.JSON201.Id
	got, _ := s.client.GetAccountWithResponse(context.Background(), taskID, id)
	a := got.JSON200
	if a.SourceLogin != "alice@old.example" || a.DestinationLogin != "alice@old.example" || a.State != api.AccountStateIdle || a.TaskId != taskID {
		t.Errorf("account %+v", *a)
	}
	creds, err := s.store.AccountCredentials(context.Background(), taskID, id)
	if err != nil {
		t.Fatal(err)
	}
	if string(creds.SourcePassword) != "s3cret" || string(creds.DestinationPassword) != "s3cret" {
		t.Error("the destination password does not default to the source's")
	}
}

func TestAccountValidationAndConflicts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	path := fmt.Sprintf("/tasks/%d/accounts", taskID)
	for body, want := range map[string]string{
		`{"source_password":"pw"}`:                        "source_login must not be empty",
		`{"source_login":"a@x"}`:                          "source_password must not be empty",
		`{"source_login":"a\nb","source_password":"pw"}`:  "source_login must be UTF-8 without control characters, at most 1024 bytes",
		`{"source_login":"a@x","source_password":"p\rw"}`: "source_password must be at most 1024 bytes, without NUL, CR or LF",
	} {
		wantText(t, s.do(t, "POST", path, body), http.StatusBadRequest, want)
	}
	if got := s.do(t, "POST", path, `{"source_login":"a@x","source_password":"pw"}`); got.status != http.StatusCreated {
		t.Fatal(got)
	}
	wantText(t, s.do(t, "POST", path, `{"source_login":"a@x","source_password":"other"}`), http.StatusConflict, `source_login "a@x" is already in this task`)
	wantText(t, s.do(t, "POST", "/tasks/999/accounts", `{"source_login":"a@x","source_password":"pw"}`), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "POST", path, `[]`), http.StatusBadRequest, "bad json")
}

func TestAccountOfAnotherTaskIsNotFound(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	first, src, dst := s.newTask(t)
	second := s.createTask(t, src, dst)
	s.importCSV(t, first, "a@x,pw\n")
	id := s.accountIDs(t, first)[0]
	other := fmt.Sprintf("/tasks/%d/accounts/%d", second, id)
	wantText(t, s.do(t, "GET", other, ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "PUT", other, `{"source_login":"b@x"}`), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "DELETE", other, ""), http.StatusNotFound, "not found")
	wantText(t, s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts/x1", first), ""), http.StatusBadRequest, "bad id")
	if ids := s.accountIDs(t, first); len(ids) != 1 {
		t.Errorf("account gone through another task's URL: %v", ids)
	}
}

func (s *testService) createTask(t *testing.T, src, dst int64) int64 {
	t.Helper()
	resp, err := s.client.CreateTaskWithResponse(context.Background(), api.TaskInput{SourceEndpointId: src, DestinationEndpointId: dst})
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("create task: %v %v", err, resp)
	}
	return resp.JSON201.Id
}

func TestUpdateAccountKeepsPasswordsUnlessGiven(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "a@old,srcpw,a@new,dstpw\nb@old,pw\n")
	ids := s.accountIDs(t, taskID)
	path := fmt.Sprintf("/tasks/%d/accounts/%d", taskID, ids[0])

	if got := s.do(t, "PUT", path, `{"source_login":"a2@old","destination_login":"a2@new"}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", got.status, got.body)
	}
	creds, _ := s.store.AccountCredentials(context.Background(), taskID, ids[0])
	if creds.SourceLogin != "a2@old" || creds.DestinationLogin != "a2@new" || string(creds.SourcePassword) != "srcpw" || string(creds.DestinationPassword) != "dstpw" {
		t.Errorf("after a PUT without passwords: %s %s %q %q", creds.SourceLogin, creds.DestinationLogin, string(creds.SourcePassword), string(creds.DestinationPassword))
	}
	if got := s.do(t, "PUT", path, `{"source_login":"a2@old","destination_password":"newdst"}`); got.status != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", got.status, got.body)
	}
	creds, _ = s.store.AccountCredentials(context.Background(), taskID, ids[0])
	if creds.DestinationLogin != "a2@old" || string(creds.SourcePassword) != "srcpw" || string(creds.DestinationPassword) != "newdst" {
		t.Errorf("after a PUT with a destination password: %s %q %q", creds.DestinationLogin, string(creds.SourcePassword), string(creds.DestinationPassword))
	}
	wantText(t, s.do(t, "PUT", path, `{"source_login":"b@old"}`), http.StatusConflict, `source_login "b@old" is already in this task`)
	wantText(t, s.do(t, "PUT", path, `{"source_login":""}`), http.StatusBadRequest, "source_login must not be empty")
}

func TestDeleteAccount(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "a@x,pw\nb@x,pw\n")
	ids := s.accountIDs(t, taskID)
	path := fmt.Sprintf("/tasks/%d/accounts/%d", taskID, ids[0])
	if got := s.do(t, "DELETE", path, ""); got.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", got.status, got.body)
	}
	wantText(t, s.do(t, "DELETE", path, ""), http.StatusNotFound, "not found")
	if left := s.accountIDs(t, taskID); len(left) != 1 || left[0] != ids[1] {
		t.Errorf("left %v, want [%d]", left, ids[1])
	}
}

func TestListAccountsPages(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "a@x,pw\nb@x,pw\nc@x,pw\nd@x,pw\n")
	all := s.accountIDs(t, taskID)
	var page []api.Account
	got := s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts?after=%d&limit=2", taskID, all[0]), "")
	if err := json.Unmarshal([]byte(got.body), &page); err != nil {
		t.Fatalf("%d %s", got.status, got.body)
	}
	if len(page) != 2 || page[0].Id != all[1] || page[1].Id != all[2] {
		t.Errorf("page after %d limit 2: %+v", all[0], page)
	}
	wantText(t, s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts?limit=0", taskID), ""), http.StatusBadRequest, "limit must be 1 or more")
	wantText(t, s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts?limit=x", taskID), ""), http.StatusBadRequest, "bad limit")
	got = s.do(t, "GET", fmt.Sprintf("/tasks/%d/accounts?after=%d", taskID, all[3]), "")
	if strings.TrimSpace(got.body) != "[]" {
		t.Errorf("page past the end: %s", got.body)
	}
}

func TestTaskCountsItsAccountsByState(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "a@x,pw\nb@x,pw\nc@x,pw\n")
	_, err := s.pool.Exec(context.Background(), `UPDATE accounts SET state = 'completed', messages_copied = 10, bytes_copied = 1000 WHERE source_login <> 'c@x'`)
	if err != nil {
		t.Fatal(err)
	}
	task, _ := s.client.GetTaskWithResponse(context.Background(), taskID)
	c := task.JSON200.Accounts
	if c.Total != 3 || c.Completed != 2 || c.Idle != 1 || task.JSON200.Totals.MessagesCopied != 20 || task.JSON200.Totals.BytesCopied != 2000 {
		t.Errorf("counts %+v totals %+v", c, task.JSON200.Totals)
	}
}

func TestImportAccounts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	path := fmt.Sprintf("/tasks/%d/accounts/import", taskID)
	body := "\ufeffdestination_login;source_login;source_password\r\nnew-a@x;a@x;\"p;w\"\r\n\r\n;b@x;pw\r\n"
	req, _ := http.NewRequest("POST", s.api+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var result api.ImportResult
	json.NewDecoder(resp.Body).Decode(&result)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || result.Created != 2 {
		t.Fatalf("import: %d %+v", resp.StatusCode, result)
	}
	accounts, _ := s.client.ListAccountsWithResponse(context.Background(), taskID, nil)
	a, b := (*accounts.JSON200)[0], (*accounts.JSON200)[1]
	if a.SourceLogin != "a@x" || a.DestinationLogin != "new-a@x" || b.DestinationLogin != "b@x" {
		t.Errorf("imported %+v %+v", a, b)
	}
	creds, _ := s.store.AccountCredentials(context.Background(), taskID, a.Id)
	if string(creds.SourcePassword) != "p;w" {
		t.Errorf("quoted password came out as %q", string(creds.SourcePassword))
	}
}

func TestImportWithBadRowsStoresNothingAndNamesEveryLine(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "taken@x,pw\n")
	var csv bytes.Buffer
	for i := range 3000 {
		switch i {
		case 1234:
			csv.WriteString("no-password@x,\n")
		case 2000:
			csv.WriteString("taken@x,pw\n")
		case 2500:
			csv.WriteString("user5@x,pw\n")
		default:
			fmt.Fprintf(&csv, "user%d@x,pw%d\n", i, i)
		}
	}
	got := s.do(t, "POST", fmt.Sprintf("/tasks/%d/accounts/import", taskID), csv.String())
	want := strings.Join([]string{
		"line 1235: source_password must not be empty",
		`line 2001: source_login "taken@x" is already in this task`,
		`line 2501: source_login "user5@x" repeats line 6`,
	}, "\n")
	wantText(t, got, http.StatusBadRequest, want)
	if ids := s.accountIDs(t, taskID); len(ids) != 1 {
		t.Errorf("a refused import stored %d accounts", len(ids)-1)
	}
}

func TestImportRefusals(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	path := fmt.Sprintf("/tasks/%d/accounts/import", taskID)
	wantText(t, s.do(t, "POST", path, ""), http.StatusBadRequest, "file has no accounts")
	wantText(t, s.do(t, "POST", path, "source_login,source_password\n\n"), http.StatusBadRequest, "file has no accounts")
	wantText(t, s.do(t, "POST", "/tasks/999/accounts/import", "a@x,pw\n"), http.StatusNotFound, "not found")
	big := strings.Repeat("someone@example.com,password\n", (32<<20)/28+1)
	wantText(t, s.do(t, "POST", path, big), http.StatusRequestEntityTooLarge, "request body too large")
}

func TestReportHasOneRowPerAccountAndNoSecret(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, "a@x,Pw-one-123,a@y,Pw-two-456\n=cmd@x,Pw-three-789\n")
	_, err := s.pool.Exec(context.Background(), `UPDATE accounts SET state = 'failed', last_error = 'quota exceeded',
		source_test_ok = false, source_test_error = 'authentication failed', source_tested_at = now() WHERE source_login = 'a@x'`)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, fmt.Sprintf("%s/tasks/%d/report.csv", s.api, taskID))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("report: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != fmt.Sprintf(`attachment; filename="task-%d-report.csv"`, taskID) {
		t.Errorf("Content-Disposition %q", cd)
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "account_id,source_login,destination_login,state") {
		t.Fatalf("report:\n%s", body)
	}
	if !strings.Contains(lines[1], ",a@x,a@y,failed,failed: authentication failed,") || !strings.HasSuffix(lines[1], ",quota exceeded,,,,,0") {
		t.Errorf("row of a@x: %s", lines[1])
	}
	if !strings.Contains(lines[2], ",'=cmd@x,") {
		t.Errorf("a login that a spreadsheet would run is not defused: %s", lines[2])
	}
	if strings.Contains(body, "Pw-") {
		t.Errorf("report holds a password:\n%s", body)
	}
	wantText(t, s.do(t, "GET", "/tasks/999/report.csv", ""), http.StatusNotFound, "not found")
}
