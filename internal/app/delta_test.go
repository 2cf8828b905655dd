package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

// TestDeltaPassesEndAtAnUnchangedSource: through the service, a pass
// after the first logs in to the destination only for the accounts whose
// source changed since their last complete pass, and still says every
// account completed; a change made on the destination alone waits for a
// verifying pass, or the final one, which look at both servers of every
// account and mend it.
func TestDeltaPassesEndAtAnUnchangedSource(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{SchedulePoll: 20 * time.Millisecond})
	ctx := context.Background()
	old, neu, taskID := annAndBob(t, s, 6, "ann,ann-pw,ann,ann-pw\nbob,bob-pw,bob,bob-pw\n")
	passes := 0
	pass := func(verify bool) api.Pass {
		t.Helper()
		if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, &api.RunTaskParams{Verify: &verify}, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
			t.Fatalf("run: %v %v", err, resp)
		}
		passes++
		run := waitPasses(t, s, taskID, passes)[passes-1]
		if run.AccountsCompleted != 2 {
			t.Errorf("pass %d: %d accounts completed, want both", passes, run.AccountsCompleted)
		}
		return run
	}
	type logins struct{ ann, bob int }
	destinationLogins := func() logins { return logins{neu.Logins(t, "ann"), neu.Logins(t, "bob")} }
	same := func(login string) {
		t.Helper()
		if got, want := len(neu.Read(t, login).Messages), len(old.Read(t, login).Messages); got != want {
			t.Errorf("%s has %d messages on the destination, %d on the source", login, got, want)
		}
	}

	pass(false)
	before, sourceBefore := destinationLogins(), old.Logins(t, "ann")
	mark := lastSeq(t, s, taskID)
	pass(false)
	if after := destinationLogins(); after != before {
		t.Errorf("a delta of unchanged sources logged in to the destination: %+v, then %+v", before, after)
	}
	// Each account logs its start and its end, which counts its unchanged
	// folders, not a line per folder.
	for _, login := range []string{"ann", "bob"} {
		wantFolderEvents(t, eventsAfter(t, s, taskID, mark), login, 0, "unchanged on the source since the last complete pass")
	}
	if n := old.Logins(t, "ann") - sourceBefore; n != 1 {
		t.Errorf("the delta logged in to ann's source %d times, want once", n)
	}
	if life, err := s.Client.GetTaskLifecycleWithResponse(ctx, taskID); err != nil || life.JSON200 == nil || life.JSON200.Stage != api.StageInSync {
		t.Errorf("after a delta of unchanged sources the lifecycle is %v %v, want in sync", err, life)
	}

	// New mail in one of ann's folders: her delta opens the destination,
	// bob's does not.
	newMail := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 9, Messages: 1})
	newMail.Messages = newMail.Messages[:1]
	old.Load(t, "ann", newMail)
	before, mark = destinationLogins(), lastSeq(t, s, taskID)
	pass(false)
	if after := destinationLogins(); after.ann == before.ann || after.bob != before.bob {
		t.Errorf("destination logins went from %+v to %+v: want more for ann alone", before, after)
	}
	// The folder that had new mail logs its end; the others are counted.
	wantFolderEvents(t, eventsAfter(t, s, taskID, mark), "ann", 1, "unchanged")
	wantFolderEvents(t, eventsAfter(t, s, taskID, mark), "bob", 0, "unchanged on the source since the last complete pass")
	same("ann")

	// A message deleted on bob's destination alone: a delta trusts his
	// unchanged source; a verifying pass looks and copies it again.
	neu.ExpungeFirst(t, "bob", "bob-pw")
	before = destinationLogins()
	pass(false)
	if after := destinationLogins(); after != before {
		t.Errorf("a delta logged in to the destinations (%+v, then %+v) though no source changed", before, after)
	}
	if run := pass(true); run.StartedBy != api.PassStarterVerify || run.MessagesCopied != 1 {
		t.Errorf("the verifying pass was started by %s and copied %d, want verify and bob's lost message", run.StartedBy, run.MessagesCopied)
	}
	if after := destinationLogins(); after.ann == before.ann || after.bob == before.bob {
		t.Errorf("the verifying pass did not log in to every destination: %+v, then %+v", before, after)
	}
	same("bob")

	// The final pass looks at both servers too.
	neu.ExpungeFirst(t, "bob", "bob-pw")
	if resp, err := s.Client.StartFinalPassWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("final pass: %v %v", err, resp)
	}
	passes++
	if run := waitPasses(t, s, taskID, passes)[passes-1]; run.StartedBy != api.PassStarterFinal || run.MessagesCopied != 1 {
		t.Errorf("the final pass was started by %s and copied %d, want final and bob's lost message", run.StartedBy, run.MessagesCopied)
	}
	same("bob")
}

// lastSeq is the seq of the task's latest event.
func lastSeq(t *testing.T, s *servicetest.Service, taskID int64) int64 {
	t.Helper()
	events := taskEvents(t, s, taskID)
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].Seq
}

// eventsAfter are the task's events after seq.
func eventsAfter(t *testing.T, s *servicetest.Service, taskID, seq int64) []api.Event {
	t.Helper()
	var after []api.Event
	for _, e := range taskEvents(t, s, taskID) {
		if e.Seq > seq {
			after = append(after, e)
		}
	}
	return after
}

// wantFolderEvents checks that login's attempt among events logged
// folder.done events folders times, and ended with an account.done that
// says unchanged.
func wantFolderEvents(t *testing.T, events []api.Event, login string, folders int, unchanged string) {
	t.Helper()
	var folderEvents int
	var done []string
	for _, e := range events {
		switch {
		case e.Login != login:
		case e.Kind == api.EventKindFolderDone:
			folderEvents++
		case e.Kind == api.EventKindAccountDone:
			done = append(done, e.Message)
		}
	}
	if folderEvents != folders {
		t.Errorf("%s: %d folder.done events, want %d", login, folderEvents, folders)
	}
	if len(done) != 1 || !strings.Contains(done[0], unchanged) {
		t.Errorf("%s: account.done %q, want one that says %q", login, done, unchanged)
	}
}

// annAndBob starts two Dovecots with the mailboxes ann and bob, loads each
// source mailbox with messages (and the folders of a corpus), and makes a
// task between them with the accounts of csv.
func annAndBob(t *testing.T, s *servicetest.Service, messages int, csv string) (old, neu *imaptest.Dovecot, taskID int64) {
	t.Helper()
	users := map[string]string{"ann": "ann-pw", "bob": "bob-pw"}
	old = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	for i, login := range []string{"ann", "bob"} {
		old.Load(t, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(i + 1), Messages: messages}))
	}
	taskID = createTask(t, s, createEndpoint(t, s, old.Host, old.Port), createEndpoint(t, s, neu.Host, neu.Port), "")
	importAccounts(t, s, taskID, csv)
	return old, neu, taskID
}
