package migration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var testParties = AttemptParties{TaskID: 3, AccountID: 9,
	Source:      Party{Side: "source", Login: "alice", Host: "old.example", Port: 993},
	Destination: Party{Side: "destination", Login: "alice@new", Host: "new.example", Port: 143}}

func TestRunOutcome(t *testing.T) {
	delays := []time.Duration{time.Minute}
	refused := FolderEnd{Source: "Sent", Destination: "Sent", SourceMessages: 10, DestinationMessages: 8,
		Refusals: []Refusal{{UID: 4, Side: "destination", Reason: "too big", Subject: "Q3 report", Date: time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC), Size: 30000000},
			{UID: 7, Side: "destination", Reason: "too big"}}}
	fine := FolderEnd{Source: "INBOX", Destination: "INBOX", SourceMessages: 5, DestinationMessages: 5}
	unchanged := func(name string, messages int, sourceOnly bool) FolderEnd {
		return FolderEnd{Source: name, Destination: name, SourceMessages: messages, DestinationMessages: messages, Unchanged: true, SourceOnly: sourceOnly}
	}
	blamed := &Party{Side: "destination", Login: "alice@new", Host: "new.example", Port: 143}
	for _, tc := range []struct {
		name      string
		end       AttemptEnd
		state     AccountState
		kind      EventKind
		lastError string
		message   string
		retries   bool
		side      string
	}{
		{"every folder verified", AttemptEnd{Progress: Progress{MessagesCopied: 4, MessagesSkipped: 1}, Folders: []FolderEnd{fine}},
			AccountCompleted, EventAccountDone, "", "alice: done: 4 messages copied, 1 already there or left out", false, ""},
		{"a folder short of messages", AttemptEnd{Folders: []FolderEnd{fine, refused}},
			AccountCompletedWithErrors, EventAccountDone,
			`folder Sent: 2 of 10 messages not copied (refused by the destination, e.g. UID 4 "Q3 report" (2024-05-01, 30000000 bytes): too big)`,
			`alice: done with errors: folder Sent: 2 of 10 messages not copied (refused by the destination, e.g. UID 4 "Q3 report" (2024-05-01, 30000000 bytes): too big)`, false, ""},
		{"unchanged on the source", AttemptEnd{Progress: Progress{MessagesSkipped: 4}, Folders: []FolderEnd{unchanged("INBOX", 3, true), unchanged("Sent", 1, true)}},
			AccountCompleted, EventAccountDone, "", "alice: done: 0 messages copied, 4 already there or left out; " +
				"2 folders (4 messages) unchanged on the source since the last complete pass; the destination was not opened: a verifying pass or the final pass looks at it", false, ""},
		{"unchanged on both sides beside a folder copied", AttemptEnd{Progress: Progress{MessagesCopied: 4, MessagesSkipped: 1}, Folders: []FolderEnd{fine, unchanged("Sent", 1, false)}},
			AccountCompleted, EventAccountDone, "", "alice: done: 4 messages copied, 1 already there or left out; 1 folder (1 message) unchanged on both sides since the last attempt", false, ""},
		{"unchanged beside a folder short of messages", AttemptEnd{Folders: []FolderEnd{refused, unchanged("INBOX", 0, true)}},
			AccountCompletedWithErrors, EventAccountDone,
			`folder Sent: 2 of 10 messages not copied (refused by the destination, e.g. UID 4 "Q3 report" (2024-05-01, 30000000 bytes): too big)`,
			`alice: done with errors: folder Sent: 2 of 10 messages not copied (refused by the destination, e.g. UID 4 "Q3 report" (2024-05-01, 30000000 bytes): too big); ` +
				"1 folder (0 messages) unchanged on the source since the last complete pass; the destination was not opened: a verifying pass or the final pass looks at it", false, ""},
		{"canceled", AttemptEnd{Progress: Progress{MessagesCopied: 12}, Err: fmt.Errorf("stopping: %w", context.Canceled)},
			AccountCanceled, EventAccountFailed, "canceled", "alice: canceled after 12 messages", false, ""},
		{"a transient failure is retried", AttemptEnd{Err: errors.New("connection reset"), Transient: true, Blamed: blamed},
			AccountFailed, EventAccountFailed, "connection reset", "alice: failed: connection reset", true, "destination"},
		{"a permanent failure is not", AttemptEnd{Err: errors.New("authentication failed"), Folders: []FolderEnd{refused}},
			AccountFailed, EventAccountFailed, "authentication failed", "alice: failed: authentication failed", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testParties.Outcome(tc.end, delays)
			if got.State != tc.state || got.LastError != tc.lastError {
				t.Errorf("state %s, last error %q; want %s, %q", got.State, got.LastError, tc.state, tc.lastError)
			}
			if (len(got.RetryDelays) > 0) != tc.retries {
				t.Errorf("retry delays %v, want retries: %v", got.RetryDelays, tc.retries)
			}
			if len(got.Events) != 1 {
				t.Fatalf("%d events, want 1", len(got.Events))
			}
			e := got.Events[0]
			if e.Kind != tc.kind || e.Message != tc.message || e.Side != tc.side || e.TaskID != 3 || e.AccountID != 9 {
				t.Errorf("event %s %q side %q, want %s %q side %q", e.Kind, e.Message, e.Side, tc.kind, tc.message, tc.side)
			}
			if e.Progress == nil || *e.Progress != tc.end.Progress {
				t.Errorf("event figures %v, want %v", e.Progress, tc.end.Progress)
			}
		})
	}
}

// TestOnlyAnUnchangedFolderWithNothingToTellIsSummarized: a folder gets
// its own folder.done event unless it is unchanged and has nothing else
// to say; what it says otherwise would be lost in the account's count.
func TestOnlyAnUnchangedFolderWithNothingToTellIsSummarized(t *testing.T) {
	unchanged := FolderEnd{Source: "Work", Destination: "Work", SourceMessages: 3, DestinationMessages: 3, Unchanged: true}
	if !unchanged.Summarized() {
		t.Error("an unchanged folder is not summarized")
	}
	for name, f := range map[string]FolderEnd{
		"copied":           {Source: "Work", Destination: "Work", SourceMessages: 3, DestinationMessages: 3},
		"failed":           {Source: "Work", Unchanged: true, Error: "cannot open"},
		"refused messages": {Source: "Work", Unchanged: true, Refusals: []Refusal{{UID: 2, Side: "destination", Reason: "too big"}}},
		"altered copies":   {Source: "Work", Unchanged: true, Altered: 1, AlteredExamples: []AlteredCopy{{SourceUID: 1, DestinationUID: 1, What: "its body was rewritten"}}},
		"keywords dropped": {Source: "Work", Unchanged: true, DroppedKeywords: []string{"$Junk"}},
	} {
		if f.Summarized() {
			t.Errorf("a folder with %s is summarized: what it tells would be lost", name)
		}
	}
}

func TestRunOutcomeNamesAtMostFiveFolders(t *testing.T) {
	var end AttemptEnd
	for i := range 8 {
		end.Folders = append(end.Folders, FolderEnd{Source: fmt.Sprintf("F%d", i), Error: "cannot create"})
	}
	got := testParties.Outcome(end, nil).LastError
	if strings.Count(got, "folder F") != 5 || !strings.HasSuffix(got, "; and 3 more folders") {
		t.Errorf("last error %q names five folders and then the count of the rest", got)
	}
}

func TestFolderDoneEvent(t *testing.T) {
	for _, tc := range []struct {
		folder  FolderEnd
		message string
		side    string
		host    string
	}{
		{FolderEnd{Source: "Work", Destination: "INBOX.Work", SourceMessages: 3, DestinationMessages: 3},
			"alice: folder Work → INBOX.Work done: the destination holds 3 of its 3 messages", "", "new.example"},
		{FolderEnd{Source: "Work", Destination: "Work", SourceMessages: 3, DestinationMessages: 3, Unchanged: true},
			"alice: folder Work → Work unchanged on both sides since the last attempt (3 messages)", "", "new.example"},
		{FolderEnd{Source: "Work", Error: "cannot open", ErrorSide: "source"},
			"alice: folder Work not copied: cannot open", "source", "old.example"},
		{FolderEnd{Source: "Work", Destination: "Work", SourceMessages: 2, DestinationMessages: 1,
			Refusals: []Refusal{{UID: 2, Side: "destination", Reason: "too big"}}, DroppedKeywords: []string{"$Junk"}},
			"alice: folder Work → Work done: the destination holds 1 of its 2 messages; 1 message refused, e.g. UID 2: too big; keywords the destination cannot keep, left out: $Junk",
			"", "new.example"},
	} {
		e := testParties.FolderDoneEvent(tc.folder, Progress{FoldersDone: 1})
		if e.Kind != EventFolderDone || e.Message != tc.message || e.Side != tc.side || e.Host != tc.host || e.Folder != "Work" {
			t.Errorf("event %s %q side %q host %s folder %s, want %q side %q host %s",
				e.Kind, e.Message, e.Side, e.Host, e.Folder, tc.message, tc.side, tc.host)
		}
	}
}

// TestAlteredCopiesAreAProblem: copies a destination rewrote are named as
// altered, not missing, in the folder's event and in the account's
// problems, with the first example.
func TestAlteredCopiesAreAProblem(t *testing.T) {
	f := FolderEnd{Source: "INBOX", Destination: "INBOX", SourceMessages: 3, DestinationMessages: 3, Altered: 2,
		AlteredExamples: []AlteredCopy{{SourceUID: 2, DestinationUID: 7, Subject: "Grüße", What: "its header was rewritten (same size, other bytes)"}}}
	want := `2 copies altered by the destination: there, but unlike the message sent (e.g. UID 2, "Grüße": its header was rewritten (same size, other bytes))`
	if got := f.Problem(); got != want {
		t.Errorf("Problem() = %q, want %q", got, want)
	}
	parties := AttemptParties{TaskID: 1, AccountID: 2, Source: Party{Login: "ann"}}
	if e := parties.FolderDoneEvent(f, Progress{}); !strings.Contains(e.Message, want) || e.Error != want {
		t.Errorf("folder.done %q (error %q), want it to say %q", e.Message, e.Error, want)
	}
	if problems := (AttemptEnd{Folders: []FolderEnd{f}}).folderProblems(); !strings.Contains(problems, "folder INBOX: 2 copies altered") {
		t.Errorf("the account's problems %q do not name the altered copies", problems)
	}
}

// A held account says how far it got: out of the source's count when the
// attempt took one, since the messages planned cover only the folders it
// reached.
func TestHeldEventSaysHowFarTheAccountGot(t *testing.T) {
	for _, tc := range []struct {
		figures Progress
		want    string
	}{
		{Progress{FoldersTotal: 6, FoldersDone: 2, MessagesTotal: 12, MessagesCopied: 12, SourceCounted: true, SourceMessages: 40},
			"ann: held after 12 of 40 messages copied, 2 of 6 folders done; it goes on where it was when the task resumes"},
		{Progress{FoldersTotal: 6, FoldersDone: 0, MessagesTotal: 1, MessagesCopied: 1},
			"ann: held after 1 message copied, 0 of 6 folders done; it goes on where it was when the task resumes"},
	} {
		e := HeldEvent(7, 9, "ann", tc.figures)
		if e.Kind != EventAccountHeld || e.Message != tc.want || e.Progress == nil || *e.Progress != tc.figures {
			t.Errorf("held event %s %q %+v, want %q with the figures", e.Kind, e.Message, e.Progress, tc.want)
		}
	}
}
