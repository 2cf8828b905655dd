package transfer

import (
	"maps"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// TestLedgerCountsOnlyItsOwnMailboxes: a folder's state written between
// another pair of mailboxes (the task pointed at another server, or the
// account's login changed) is no state: it neither makes a source look
// unchanged, nor keeps a folder where that pass put it.
func TestLedgerCountsOnlyItsOwnMailboxes(t *testing.T) {
	job := Job{Source: imapconn.Side{Server: imapconn.Server{Host: "old.example", Port: 143}, Login: "ann"},
		Destination: imapconn.Side{Server: imapconn.Server{Host: "new.example", Port: 143}, Login: "ann"}, State: syncstate.NewMemoryState()}
	ours := sideKey(&job.Source) + " → " + sideKey(&job.Destination)
	theirs := sideKey(&job.Source) + " → other.example:143/ann"
	for folder, st := range map[string]syncstate.FolderState{
		"INBOX":   {Servers: theirs, Destination: "INBOX", Complete: true},
		"Archive": {Servers: ours, Destination: "Archives"},
	} {
		if err := job.State.SetFolderState(t.Context(), folder, st); err != nil {
			t.Fatal(err)
		}
	}
	ledger, err := readLedger(t.Context(), &job)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ledger.ours("INBOX"); ok {
		t.Error("INBOX's state from another destination counts as this job's")
	}
	if st, ok := ledger.ours("Archive"); !ok || st.Destination != "Archives" {
		t.Errorf("Archive's own state: %+v, %v", st, ok)
	}
	if ledger.completedBefore() {
		t.Error("a folder completed towards another destination makes a first copy look like a delta")
	}
	if got, want := ledger.previousDestinations(), map[string]string{"Archive": "Archives"}; !maps.Equal(got, want) {
		t.Errorf("previous destinations %v, want %v", got, want)
	}

	if err := ledger.save(t.Context(), "INBOX", syncstate.FolderState{Servers: ours, Destination: "INBOX", Complete: true}); err != nil {
		t.Fatal(err)
	}
	if !ledger.completedBefore() {
		t.Error("INBOX completed between these mailboxes, and the ledger does not say so")
	}
	again, err := readLedger(t.Context(), &job)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := again.ours("INBOX"); !ok || !st.Complete {
		t.Errorf("the saved state did not reach the store: %+v, %v", st, ok)
	}
}
