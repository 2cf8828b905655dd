package httpapi

import (
	"context"
	"sync"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// maxAuditBatch caps the entries one statement appends.
const maxAuditBatch = 500

// auditQueue appends the entries of requests answered at the same time in
// one statement, each request still waiting for its own entry to be
// stored before its answer goes out. One request at a time writes: it
// takes every entry waiting, its own among them, writes them and hands
// the writing on to the first entry that arrived meanwhile. Under 200
// clients, a change cost a round trip and a commit of its own for its
// entry; now the entries of the changes answered while one batch is
// written go in the next.
type auditQueue struct {
	trail AuditTrail

	mu      sync.Mutex
	writing bool          // a request is writing a batch
	waiting []*auditEntry // arrived while it writes, in order
}

// auditEntry is an entry waiting in the queue. written gets the batch's
// error, or writeNext{}: its request writes the next batch.
type auditEntry struct {
	entry   migration.AuditEntry
	written chan error
}

// writeNext is no error: it tells a waiting request to write the next
// batch.
type writeNext struct{}

func (writeNext) Error() string { return "write the next batch" }

// record stores e in the trail, with the entries waiting beside it. A
// batch's write has auditRecordTimeout, from when it starts.
func (q *auditQueue) record(ctx context.Context, e migration.AuditEntry) error {
	mine := &auditEntry{entry: e, written: make(chan error, 1)}
	q.mu.Lock()
	if q.writing {
		q.waiting = append(q.waiting, mine)
		q.mu.Unlock()
		// A request waits for the batch before its own, and then its own.
		if err := <-mine.written; err != (writeNext{}) {
			return err
		}
		q.mu.Lock()
	} else {
		q.writing = true
		q.waiting = append(q.waiting, mine)
	}
	n := min(len(q.waiting), maxAuditBatch)
	batch := q.waiting[:n:n]
	q.waiting = q.waiting[n:]
	q.mu.Unlock()

	entries := make([]migration.AuditEntry, len(batch))
	for i, w := range batch {
		entries[i] = w.entry
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditRecordTimeout)
	err := q.trail.AuditRecord(ctx, entries...)
	cancel()
	for _, w := range batch[1:] {
		w.written <- err
	}

	q.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].written <- writeNext{}
	} else {
		q.writing = false
		q.waiting = nil
	}
	q.mu.Unlock()
	return err
}
