package migration

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// EventKind names what happened (docs/design.md#event-kinds).
type EventKind string

// The kinds of event.
const (
	EventTestOK          EventKind = "test.ok"
	EventTestFailed      EventKind = "test.failed"
	EventTestCanceled    EventKind = "test.canceled"
	EventRunStarted      EventKind = "run.started"
	EventAccountStarted  EventKind = "account.started"
	EventAccountProgress EventKind = "account.progress"
	EventFolderDone      EventKind = "folder.done"
	// EventScriptsDone: the account's Sieve scripts were moved, after
	// its messages (ScriptsEnd).
	EventScriptsDone   EventKind = "scripts.done"
	EventAccountDone   EventKind = "account.done"
	EventAccountFailed EventKind = "account.failed"
	// EventAccountThrottled: a server asked the account to slow down; it
	// pauses as long as the server says and goes on where it was.
	EventAccountThrottled EventKind = "account.throttled"
	// EventAccountHeld: a running account stopped for its task's
	// "pause and stop", queued with its figures to go on where it was
	// when the task resumes.
	EventAccountHeld EventKind = "account.held"
	// EventAccountAuthorized: a device authorization stored an account's
	// refresh token.
	EventAccountAuthorized EventKind = "account.authorized"
	EventRunFinished       EventKind = "run.finished"
	EventRunCanceled       EventKind = "run.canceled"
	// EventRunJoined: accounts joined the pass under way.
	EventRunJoined EventKind = "run.joined"
	// EventAccountsCanceled: some accounts of a pass were canceled; the
	// others go on.
	EventAccountsCanceled EventKind = "accounts.canceled"
	// EventTaskPaused and EventTaskResumed: a task was paused (no pass
	// starts) and resumed.
	EventTaskPaused  EventKind = "task.paused"
	EventTaskResumed EventKind = "task.resumed"
	// EventFinalVerified: the final pass ended with every account
	// completed; EventFinalUnverified: it ended otherwise.
	EventFinalVerified   EventKind = "final.verified"
	EventFinalUnverified EventKind = "final.unverified"
	EventError           EventKind = "error"
	// EventWebhookTest is only ever sent to a webhook, by its test
	// (Service.TestWebhook); it is never logged.
	EventWebhookTest EventKind = "webhook.test"
)

// EventKinds are every EventKind, in the order the API lists them.
var EventKinds = []EventKind{EventTestOK, EventTestFailed, EventTestCanceled, EventRunStarted,
	EventAccountStarted, EventAccountProgress, EventFolderDone, EventScriptsDone, EventAccountDone, EventAccountFailed,
	EventRunFinished, EventRunCanceled, EventRunJoined, EventAccountsCanceled, EventAccountThrottled, EventAccountHeld, EventAccountAuthorized,
	EventTaskPaused, EventTaskResumed, EventFinalVerified, EventFinalUnverified, EventError, EventWebhookTest}

// Event is one entry of a task's event log. Seq orders all events of the
// service. It never carries a password.
type Event struct {
	Seq       int64
	Time      time.Time
	Kind      EventKind
	TaskID    int64
	AccountID int64
	Side      string // "source" or "destination", or empty
	Login     string
	Host      string
	Port      int
	Error     string
	Message   string // a sentence for people
	Folder    string // the source folder an event is about, or empty
	// Progress is the account's figures at the time of the event, on
	// account.progress, folder.done, account.done and account.failed.
	Progress *Progress
}

// Limits of an event page.
const (
	DefaultEventPage = 100
	MaxEventPage     = 1000
)

// EventStore keeps events.
type EventStore interface {
	EventList(ctx context.Context, taskID, afterSeq int64, limit int) ([]Event, error)
	// EventLatestSeq is the seq of the newest event, 0 with none.
	EventLatestSeq(ctx context.Context) (int64, error)
}

// testEventMessage is the sentence of a connection test event, e.g.
// "alice@old.example → imap.old.example:993: authentication failed: …".
func testEventMessage(login, host string, port int, errText string) string {
	address := net.JoinHostPort(host, strconv.Itoa(port))
	if errText == "" {
		return fmt.Sprintf("%s → %s: login ok", login, address)
	}
	return fmt.Sprintf("%s → %s: %s", login, address, errText)
}

// TestEvent is the event of one side's connection test.
func TestEvent(taskID, accountID int64, side, login, host string, port int, errText string) Event {
	kind := EventTestOK
	if errText != "" {
		kind = EventTestFailed
	}
	return Event{
		Kind: kind, TaskID: taskID, AccountID: accountID, Side: side,
		Login: login, Host: host, Port: port, Error: errText,
		Message: testEventMessage(login, host, port, errText),
	}
}
