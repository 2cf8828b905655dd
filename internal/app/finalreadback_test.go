package app_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestTheFinalPassReadsBackEveryCopy: a task that only counts its copies
// (verify_copies counts) ran a pass; then one copy of ann's was changed
// on the destination's disk (same size, another byte). A delta pass does
// not see it; the final pass reads every copy back against its source
// message, at headers at least, finds it, and the task is not verified:
// the account and its folders say which copy and what changed, and keep
// saying so after a later delta pass.
func TestTheFinalPassReadsBackEveryCopy(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{SchedulePoll: 20 * time.Millisecond})
	ctx := context.Background()
	users := map[string]string{"ann": "ann-pw", "bob": "bob-pw"}
	old := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	for i, login := range []string{"ann", "bob"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: 8}))
	}
	taskID := createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), `{"verify_copies":"counts"}`)
	importAccounts(t, s, taskID, "ann,ann-pw,ann,ann-pw\nbob,bob-pw,bob,bob-pw\n")
	run := func(n int) api.Pass {
		t.Helper()
		if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
			t.Fatalf("run %d: %v %v", n, err, resp)
		}
		return waitPasses(t, s, taskID, n)[n-1]
	}
	run(1)
	// A header line's byte: what the header depth reads.
	neu.AlterStored(t, "ann", func(b []byte) []byte {
		out := []byte(string(b))
		i := strings.Index(string(out), "Subject: ") + len("Subject: ")
		out[i] ^= 0x20 // the first letter's case
		return out
	})
	if delta := run(2); delta.Accounts != 2 {
		t.Fatalf("delta pass: %+v", delta)
	}
	if got := accountState(t, s, taskID, "ann"); got != api.AccountStateCompleted {
		t.Fatalf("after a delta pass ann is %s; a delta pass reads no earlier copy back", got)
	}
	if resp, err := s.Client.StartFinalPassWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("final pass: %v %v", err, resp)
	}
	waitPasses(t, s, taskID, 3)
	ann := waitAccount(t, s, taskID, "ann", func(a api.Account) bool {
		return a.State != api.AccountStateQueued && a.State != api.AccountStateRunning
	})
	if ann.State != api.AccountStateCompletedWithErrors || !strings.Contains(ann.LastError, "1 copy altered by the destination") ||
		!strings.Contains(ann.LastError, "its header was rewritten") {
		t.Errorf("after the final pass ann is %s: %q; want completed_with_errors naming the altered copy", ann.State, ann.LastError)
	}
	if bob := accountState(t, s, taskID, "bob"); bob != api.AccountStateCompleted {
		t.Errorf("bob, whose copies are as sent, is %s after the final pass", bob)
	}
	// The account's folders name the altered copy, and a delta pass after
	// the final one, which reads nothing back, keeps saying so.
	wantAltered := func(when string) {
		t.Helper()
		folders, err := s.Client.ListAccountFoldersWithResponse(ctx, taskID, ann.Id)
		if err != nil || folders.JSON200 == nil {
			t.Fatalf("%s: folders: %v %v", when, err, folders)
		}
		altered := 0
		for _, f := range *folders.JSON200 {
			altered += int(f.Altered)
			if f.Altered > 0 && (f.Source != "INBOX" || len(f.AlteredExamples) != 1 || f.AlteredExamples[0].What != "its header was rewritten (same size, other bytes)") {
				t.Errorf("%s: folder %s: %d altered, %+v", when, f.Source, f.Altered, f.AlteredExamples)
			}
		}
		if altered != 1 {
			t.Errorf("%s: the folders name %d altered copies, want 1", when, altered)
		}
	}
	wantAltered("after the final pass")
	run(4)
	if again := accountState(t, s, taskID, "ann"); again != api.AccountStateCompletedWithErrors {
		t.Errorf("after a delta pass that read nothing back, ann is %s; the altered copy is still there", again)
	}
	wantAltered("after a delta pass")
	rows := taskReportRows(t, s, taskID)
	column, altered := slices.Index(rows[0], "altered_copies"), map[string]string{}
	for _, row := range rows[1:] {
		altered[row[1]] = row[column]
	}
	if column < 0 || altered["ann"] != "1" || altered["bob"] != "0" {
		t.Errorf("the report's altered copies: %v (column %d), want ann 1 and bob 0", altered, column)
	}
	life, err := s.Client.GetTaskLifecycleWithResponse(ctx, taskID)
	if err != nil || life.JSON200 == nil {
		t.Fatalf("lifecycle: %v %v", err, life)
	}
	if life.JSON200.Stage == api.StageVerified {
		t.Errorf("the task is verified (%s) though a copy differs from its source message", life.JSON200.Words)
	}
}

// accountState is the state of the account of login.
func accountState(t *testing.T, s *servicetest.Service, taskID int64, login string) api.AccountState {
	t.Helper()
	return waitAccount(t, s, taskID, login, func(api.Account) bool { return true }).State
}
