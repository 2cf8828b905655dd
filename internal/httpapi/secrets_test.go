package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestPasswordsNeverLeaveTheService sends passwords in by every way in
// (create, import, update, bad requests that echo fields) and reads every
// way out (responses, report, logs): none may show them.
func TestPasswordsNeverLeaveTheService(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	const (
		pw1 = "Sekrit-one-5b1"
		pw2 = "Sekrit-two-7c2"
		pw3 = "Sekrit-three-9d3"
		pw4 = "Sekrit-four-1e4"
	)
	accounts := fmt.Sprintf("/tasks/%d/accounts", taskID)
	var bodies []string
	record := func(r reply) { bodies = append(bodies, r.body) }
	record(s.do(t, "POST", accounts, fmt.Sprintf(`{"source_login":"a@x","source_password":%q,"destination_password":%q}`, pw1, pw2)))
	record(s.do(t, "POST", accounts+"/import", fmt.Sprintf("b@x,%s\nc@x,\n", pw3)))
	record(s.do(t, "POST", accounts+"/import", fmt.Sprintf("b@x,%s\n", pw3)))
	record(s.do(t, "POST", accounts, fmt.Sprintf(`{"source_login":"a@x","source_password":%q}`, pw1)))
	record(s.do(t, "POST", accounts, fmt.Sprintf(`{"source_login":"d@x","source_password":"%s\r"}`, pw4)))
	id := s.accountIDs(t, taskID)[0]
	record(s.do(t, "PUT", fmt.Sprintf("%s/%d", accounts, id), fmt.Sprintf(`{"source_login":"a@x","source_password":%q}`, pw4)))
	record(s.do(t, "GET", accounts, ""))
	record(s.do(t, "GET", fmt.Sprintf("%s/%d", accounts, id), ""))
	record(s.do(t, "GET", fmt.Sprintf("/tasks/%d", taskID), ""))
	record(s.do(t, "GET", "/tasks", ""))
	record(s.do(t, "GET", fmt.Sprintf("/tasks/%d/report.csv", taskID), ""))
	if got := s.do(t, "GET", accounts, ""); got.status != http.StatusOK || !strings.Contains(got.body, "a@x") {
		t.Fatalf("the accounts were not stored: %v", got)
	}
	out := strings.Join(bodies, "\n") + s.logs.String()
	for _, pw := range []string{pw1, pw2, pw3, pw4, "Sekrit"} {
		if strings.Contains(out, pw) {
			t.Errorf("password %q left the service:\n%s", pw, out)
		}
	}
	var stored int
	err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM accounts
		WHERE position('Sekrit'::bytea in source_password) > 0 OR position('Sekrit'::bytea in destination_password) > 0`).Scan(&stored)
	if err != nil || stored != 0 {
		t.Errorf("%d rows hold a password in clear (%v)", stored, err)
	}
}
