package app_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// echoing is an IMAP server's conversation that refuses every command,
// quoting it back: a LOGIN's refusal then holds the password it was sent.
func echoing(conn net.Conn) {
	io.WriteString(conn, "* OK [CAPABILITY IMAP4rev1] echo ready\r\n") //nolint:errcheck // the client may be gone
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		tag, command, _ := strings.Cut(lines.Text(), " ")
		fmt.Fprintf(conn, "%s NO [AUTHENTICATIONFAILED] refused: %s\r\n", tag, command)
	}
}

// TestServersEchoingSecretsLeaveNone: a server that quotes the LOGIN
// command, password and all, in its refusal, for a run and a login test:
// the password is in none of what the service keeps or says (the
// account's error, the events, the report, the API's answers, the log).
func TestServersEchoingSecretsLeaveNone(t *testing.T) {
	t.Parallel()
	const password = "Echoed-Pa55word-of-ann"
	log := &testsupport.SyncBuffer{}
	s := servicetest.Start(t, servicetest.Options{Log: log})
	host, port := imaptest.StartScripted(t, echoing)
	taskID := createTask(t, s, createEndpoint(t, s, host, port), createEndpoint(t, s, host, port), "")
	importAccounts(t, s, taskID, "ann,"+password+"\n")
	ctx := context.Background()
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	servicetest.WaitTaskState(t, s.Client, taskID, api.TaskStateFailed)
	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("test: %v %v", err, resp)
	}
	servicetest.WaitTestsDone(t, s.Client, taskID)

	ann := accountByLogin(t, s, taskID, "ann")
	if !strings.Contains(ann.LastError, "refused: LOGIN") {
		t.Fatalf("the server's words are not in the account's error: %q", ann.LastError)
	}
	var stored int
	if err := s.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM accounts WHERE last_error LIKE '%' || $1 || '%' OR source_test_error LIKE '%' || $1 || '%'
		   OR destination_test_error LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM events WHERE error LIKE '%' || $1 || '%' OR message LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM account_passes WHERE last_error LIKE '%' || $1 || '%')`, password).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Errorf("%d rows of the database hold the password", stored)
	}
	for _, path := range []string{"/tasks/%d/accounts", "/tasks/%d/events?limit=1000", "/tasks/%d/report.csv"} {
		resp, err := http.Get(fmt.Sprintf(s.API+path, taskID))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), password) {
			t.Errorf("GET %s holds the password", path)
		}
	}
	if strings.Contains(log.String(), password) {
		t.Errorf("the service's log holds the password")
	}
}
