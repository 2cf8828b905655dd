package transfer

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// Copy pipeline sizes: bodies are fetched fetchBatch at a time and go out
// as one MULTIAPPEND per batch where the destination has it, else one
// APPEND each; up to window(...) commands are on the wire before the
// oldest is waited for, so that both connections stay busy (RFC 7888
// LITERAL+ lets the client send a body without waiting for the server's
// go-ahead).
const (
	fetchBatch = 50
	// appendWindow single APPENDs, or batchWindow MULTIAPPENDs.
	appendWindow = 16
	batchWindow  = 2
)

// pendingAppend is an APPEND command sent and not yet answered: one
// message, or a batch with MULTIAPPEND.
type pendingAppend struct {
	tag  string
	msgs []message
}

// folderCopy copies the chosen messages of one folder.
type folderCopy struct {
	m           *accountAttempt
	destination string
	flags       flagFilter
	appender    *imapconn.Appender
	pending     []pendingAppend
	failures    []syncstate.MessageFailure
	// sourceRefusal is the source's words for the messages a FETCH did not
	// deliver.
	sourceRefusal string
	// copied receives each message the destination took, with its UID
	// there (0 where the server did not say: no UIDPLUS).
	copied func(msg message, written []imap.Flag, uid imap.UID)
	// bodies are the source bodies streamed, by source UID, until their
	// copy is settled; sent, what the settled copies were sent as, for
	// the read-back.
	bodies map[imap.UID]*sourceBody
	sent   []sentCopy
}

// copyMessages streams each message from a source FETCH into a destination
// APPEND with its flags and INTERNALDATE.
func (f *folderCopy) copyMessages(ctx context.Context, messages []message) error {
	if limit, words := f.m.sizeLimit(f.appender.MaxMessageBytes()); limit > 0 {
		// The server said what it refuses, or its provider documents it:
		// not sending spares each such message its FETCH and a refused
		// APPEND, and says why.
		messages = slices.DeleteFunc(slices.Clone(messages), func(msg message) bool {
			if msg.Size <= limit {
				return false
			}
			f.fail(msg, "destination", words(msg.Size))
			return true
		})
	}
	for len(messages) > 0 {
		err := ctx.Err()
		take := 0
		if err == nil {
			batch := messages[:min(fetchBatch, len(messages))]
			if take, err = f.m.spendTraffic(ctx, batch); err != nil {
				// The copies on the wire are settled: the pause may be long.
				return cmp.Or(f.settleAll(), err)
			}
			err = f.copyBatch(batch[:take], f.appender.Batches())
		}
		if err != nil {
			f.stopping(ctx, err)
			return err
		}
		messages = messages[take:]
	}
	return f.settleAll()
}

// stopping learns, where it can, what the destination made of the
// APPENDs on the wire when the copy stops for a reason other than the
// destination (a cancel, the source failing), so that their copies are
// mapped instead of in doubt. The destination gets answerGrace.
func (f *folderCopy) stopping(ctx context.Context, err error) {
	if len(f.pending) == 0 || !(isSourceError(err) || ctx.Err() != nil) {
		return
	}
	f.appender.GiveTimeToAnswer()
	for len(f.pending) > 0 {
		done := f.appender.Wait(f.pending[0].tag)
		if done.Err != nil && imapconn.Classify(done.Err) != imapconn.KindPermanent {
			return // this one and the rest stay in doubt
		}
		f.answered(done)
	}
}

// answered takes the answer to the oldest pending APPEND without sending
// anything: its copies are recorded, or its refusal (nothing of it was
// saved; a batch's messages are tried again by the next attempt).
func (f *folderCopy) answered(done imapconn.Completion) {
	p := f.pending[0]
	f.pending = f.pending[1:]
	switch {
	case done.Err == nil:
		f.settled(p.msgs, done.UIDs)
	case len(p.msgs) == 1:
		f.fail(p.msgs[0], "destination", f.appender.Fail(imapconn.KindPermanent, done.Err).Error())
	}
}

// unsettled returns the messages of the APPENDs sent whose answer never
// came: the server may have saved them, now or later.
func (f *folderCopy) unsettled() []message {
	// Answers read while waiting for something else (a continuation
	// request, without LITERAL+) are known, not in doubt.
	for len(f.pending) > 0 {
		done, ok := f.appender.AnsweredMeanwhile(f.pending[0].tag)
		if !ok {
			break
		}
		f.answered(done)
	}
	var msgs []message
	for _, p := range f.pending {
		msgs = append(msgs, p.msgs...)
	}
	return msgs
}

// copyBatch fetches the bodies of batch and appends them: as one
// MULTIAPPEND, or one APPEND each.
func (f *folderCopy) copyBatch(batch []message, multi bool) error {
	byUID := make(map[imap.UID]message, len(batch))
	for _, msg := range batch {
		byUID[msg.UID] = msg
	}
	fetched := map[imap.UID]bool{}
	var cmd *imapconn.AppendBatch
	var sent []message
	err := f.streamBodies(batch, byUID, func(msg message, body imap.LiteralReader) error {
		fetched[msg.UID] = true
		if !multi {
			return f.send(msg, body)
		}
		var err error
		if cmd == nil {
			if cmd, err = f.appender.Begin(f.destination); err != nil {
				return err
			}
		}
		msg.Size = body.Size()
		sent = append(sent, msg)
		return cmd.Add(f.flags.keep(msg.Flags), msg.Date, body)
	})
	if multi && cmd != nil && cmd.Refused != nil && !isSourceError(err) {
		if kind := imapconn.Classify(cmd.Refused); kind != imapconn.KindPermanent { // a throttle: no message is at fault
			return f.appender.Fail(kind, cmd.Refused)
		}
		f.m.logger.Info("a batch was refused; sending its messages one by one", "folder", f.destination, "err", cmd.Refused)
		return f.copyBatch(batch, false)
	}
	if multi {
		err = f.endBatch(cmd, sent, err)
	}
	if err != nil {
		return err
	}
	f.unreadable(batch, fetched)
	return nil
}

// endBatch sends the MULTIAPPEND on its way.
func (f *folderCopy) endBatch(cmd *imapconn.AppendBatch, sent []message, streamErr error) error {
	switch {
	case cmd == nil:
		return streamErr // every message of the batch is gone from the source, or unreadable
	case streamErr != nil:
		return f.destinationFailed(streamErr)
	}
	// Pending before it is ended: a failure to send its last bytes may
	// come after the server has them all.
	f.pending = append(f.pending, pendingAppend{tag: cmd.Tag, msgs: sent})
	if err := cmd.End(); err != nil {
		return f.destinationFailed(err)
	}
	if len(f.pending) >= batchWindow {
		return f.settleOldest()
	}
	return nil
}

// unreadable records the messages of batch that the source's FETCH did
// not deliver although it answered OK or NO (a server that cannot read a
// message): they are retried by the next attempt, and the folder goes on.
func (f *folderCopy) unreadable(batch []message, fetched map[imap.UID]bool) {
	for _, msg := range batch {
		if !fetched[msg.UID] {
			f.fail(msg, "source", f.sourceRefusal)
		}
	}
	f.sourceRefusal = ""
}

func (f *folderCopy) fail(msg message, side, reason string) {
	if reason == "" {
		reason = "the server did not deliver the message"
	}
	f.failures = append(f.failures, syncstate.MessageFailure{UID: uint32(msg.UID), Side: side, Reason: reason, Date: msg.Date, Size: msg.Size})
	f.m.figures.failed(f.m.progress.Folder)
	f.m.report()
}

// streamBodies fetches the bodies of batch from the source and hands each
// to sink while it streams in. go-imap's reader waits for every literal it
// hands out to be read to its end, so: once sink fails (the destination's
// fault) the rest of the FETCH is read and dropped; once reading the
// source fails, the FETCH is never touched again (reading a failed
// literal a second time races with that reader) and the connection is
// dropped. A FETCH the source ends with NO (it could not read some
// message) keeps what it delivered; the caller records the rest.
func (f *folderCopy) streamBodies(batch []message, byUID map[imap.UID]message, sink func(message, imap.LiteralReader) error) error {
	var uids imap.UIDSet
	for _, msg := range batch {
		uids.AddNum(msg.UID)
	}
	src := f.m.source
	cmd := src.Fetch(uids, &imap.FetchOptions{
		UID:         true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}},
	})
	var sinkErr error
	for {
		fetched, cleanup, err := nextBody(cmd)
		if err != nil {
			src.Abandon()
			return sourceError{src.Fail(imapconn.KindTransient, err)}
		}
		if fetched == nil {
			break
		}
		body := &sourceBody{LiteralReader: fetched.Body, digest: newHeaderDigest()}
		if f.m.job.Options.ReadBackBodies {
			body.whole = sha256.New()
		}
		if msg, ok := byUID[fetched.UID]; ok && sinkErr == nil {
			f.bodies[msg.UID] = body
			sinkErr = sink(msg, body)
		}
		if body.err == nil {
			io.Copy(io.Discard, body) //nolint:errcheck // recorded in body.err
		}
		cleanup()
		if body.err != nil {
			src.Abandon()
			return sourceError{src.Fail(imapconn.KindTransient, body.err)}
		}
	}
	if err := cmd.Close(); err != nil && sinkErr == nil {
		if imapconn.Classify(err) == imapconn.KindPermanent {
			f.sourceRefusal = src.Fail(imapconn.KindPermanent, err).Error()
			return nil
		}
		return sourceError{src.Failed(err)}
	}
	return sinkErr
}

// sourceError marks a failure of the source's FETCH, as opposed to the
// destination's APPEND, while a body streams from one to the other.
type sourceError struct{ error }

func (e sourceError) Unwrap() error { return e.error }

func isSourceError(err error) bool {
	var s sourceError
	return errors.As(err, &s)
}

// sourceBody records a failure to read a body from the source, as opposed
// to a failure to write it to the destination. A body that ends before
// its announced size is a failure too: go-imap's literal reader reports a
// connection that closed mid-literal as its end.
type sourceBody struct {
	imap.LiteralReader
	read int64
	err  error
	// digest hashes the header as it goes by, for the read-back; whole,
	// when the read-back compares whole bodies, all of it.
	digest *headerDigest
	whole  hash.Hash
}

func (b *sourceBody) Read(p []byte) (int, error) {
	n, err := b.LiteralReader.Read(p)
	b.read += int64(n)
	b.digest.Write(p[:n])
	if b.whole != nil {
		b.whole.Write(p[:n])
	}
	if err == io.EOF && b.read < b.Size() {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// send appends one message on its own, streaming its body, and settles
// the oldest APPEND when the window is full. A message the server refuses
// before its body is sent is recorded, and the connection goes on.
func (f *folderCopy) send(msg message, body imap.LiteralReader) error {
	cmd, err := f.appender.Begin(f.destination)
	if err == nil {
		err = cmd.Add(f.flags.keep(msg.Flags), msg.Date, body)
	}
	if cmd != nil && cmd.Refused != nil {
		if kind := imapconn.Classify(cmd.Refused); kind != imapconn.KindPermanent { // a throttle: the message is not at fault
			return f.appender.Fail(kind, cmd.Refused)
		}
		f.fail(msg, "destination", f.appender.Fail(imapconn.KindPermanent, cmd.Refused).Error())
		return nil
	}
	if err != nil {
		return f.destinationFailed(err)
	}
	msg.Size = body.Size() // what went over the wire
	f.pending = append(f.pending, pendingAppend{tag: cmd.Tag, msgs: []message{msg}})
	if err := cmd.End(); err != nil {
		return f.destinationFailed(err)
	}
	if len(f.pending) >= appendWindow {
		return f.settleOldest()
	}
	return nil
}

// destinationFailed fails the attempt for a broken APPEND connection:
// half a literal leaves it unusable.
func (f *folderCopy) destinationFailed(err error) error {
	if isSourceError(err) {
		return err
	}
	if throttle := f.appender.Throttled(); throttle != nil {
		return f.appender.Fail(imapconn.KindThrottled, throttle)
	}
	return f.appender.Fail(imapconn.KindTransient, fmt.Errorf("append: %w", f.appender.WithBye(err)))
}

// settleOldest waits for the oldest APPEND's answer. A refused single
// message is recorded and skipped; a refused batch is sent again one
// message at a time (the server appends all of a batch or none, RFC 3502
// §6.3.11), so that only the messages the server refuses are left out; a
// full mailbox or a broken connection ends the folder.
func (f *folderCopy) settleOldest() error {
	p := f.pending[0]
	done := f.appender.Wait(p.tag)
	kind := imapconn.Classify(done.Err)
	if done.Err != nil && kind != imapconn.KindPermanent {
		return f.appender.Fail(kind, done.Err) // p stays pending: in doubt
	}
	f.pending = f.pending[1:]
	switch {
	case done.Err == nil:
		f.settled(p.msgs, done.UIDs)
		return nil
	case len(p.msgs) == 1:
		f.fail(p.msgs[0], "destination", f.appender.Fail(imapconn.KindPermanent, done.Err).Error())
		return nil
	default:
		f.m.logger.Info("a batch was refused; sending its messages one by one", "folder", f.destination, "err", done.Err)
		if err := f.settleAll(); err != nil {
			return err
		}
		return f.copyBatch(p.msgs, false)
	}
}

// settled records the messages of an APPEND the server took.
func (f *folderCopy) settled(msgs []message, uids []imap.UID) {
	if len(uids) != len(msgs) {
		uids = nil // no APPENDUID, or one that does not add up: found by identity
	}
	for i, msg := range msgs {
		var uid imap.UID
		if uids != nil {
			uid = uids[i]
		}
		if body := f.bodies[msg.UID]; body != nil && uid != 0 {
			f.sent = append(f.sent, sentCopyOf(msg, uid, body))
		}
		delete(f.bodies, msg.UID)
		f.m.figures.copied(f.m.progress.Folder, msg.Size)
		f.copied(msg, f.flags.keep(msg.Flags), uid)
	}
	f.m.report()
}

func (f *folderCopy) settleAll() error {
	for len(f.pending) > 0 {
		if err := f.settleOldest(); err != nil {
			return err
		}
	}
	return nil
}

// flagFilter keeps the flags a destination folder can store. The system
// flags always go: servers ignore those they cannot keep, and dropping
// \Seen would lose what the user has read. \Recent is the server's own
// (RFC 3501 §2.3.2). Keywords go where PERMANENTFLAGS lists them or allows
// new ones with "\*" (RFC 9051 §7.1), or where the server sent no list.
type flagFilter struct {
	known   bool
	anyKey  bool
	allowed map[imap.Flag]bool
}

var systemFlags = map[imap.Flag]bool{
	canonicalFlag(imap.FlagSeen): true, canonicalFlag(imap.FlagAnswered): true,
	canonicalFlag(imap.FlagFlagged): true, canonicalFlag(imap.FlagDeleted): true,
	canonicalFlag(imap.FlagDraft): true,
}

func newFlagFilter(permanent []imap.Flag) flagFilter {
	f := flagFilter{known: permanent != nil, allowed: map[imap.Flag]bool{}}
	for _, flag := range permanent {
		if flag == imap.FlagWildcard {
			f.anyKey = true
		}
		f.allowed[canonicalFlag(flag)] = true
	}
	return f
}

// dropped returns the keywords of flags that keep leaves out.
func (f flagFilter) dropped(flags []imap.Flag) []string {
	var out []string
	for _, flag := range flags {
		c := canonicalFlag(flag)
		if len(flag) > 0 && flag[0] != '\\' && f.known && !f.anyKey && !f.allowed[c] {
			out = append(out, string(flag))
		}
	}
	return out
}

func (f flagFilter) keep(flags []imap.Flag) []imap.Flag {
	kept := make([]imap.Flag, 0, len(flags))
	for _, flag := range flags {
		c := canonicalFlag(flag)
		switch {
		case systemFlags[c]:
			kept = append(kept, flag)
		case len(flag) > 0 && flag[0] == '\\': // \Recent, or an unknown system flag
		case !f.known, f.anyKey, f.allowed[c]:
			kept = append(kept, flag)
		}
	}
	return kept
}

// canonicalFlag folds case: flags are case-insensitive (RFC 9051 §2.3.2).
func canonicalFlag(flag imap.Flag) imap.Flag {
	return imap.Flag(toLowerASCII(string(flag)))
}

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
