package transfer

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Copy pipeline sizes: bodies are fetched fetchBatch at a time, and up to
// appendWindow APPENDs are on the wire before the oldest is waited for,
// so that both connections stay busy (RFC 7888 LITERAL+ lets the client
// send a body without waiting for the server's go-ahead).
const (
	fetchBatch   = 50
	appendWindow = 16
	// batchWindow MULTIAPPEND commands may be on the wire at once.
	batchWindow = 2
)

// pendingAppend is an APPEND sent and not yet answered.
type pendingAppend struct {
	msg message
	cmd *imapclient.AppendCommand
}

// pendingBatch is a MULTIAPPEND sent and not yet answered.
type pendingBatch struct {
	tag  string
	msgs []message
}

// folderCopy copies the chosen messages of one folder.
type folderCopy struct {
	m           *accountRun
	destination string
	flags       flagFilter
	appender    *appender // nil: one APPEND per message
	pending     []pendingAppend
	batches     []pendingBatch
	failures    []MessageFailure
	// done holds every UID whose fate is settled: copied, or refused.
	done map[imap.UID]bool
}

// copyMessages streams each message from a source FETCH into a destination
// APPEND with its flags and INTERNALDATE.
func (f *folderCopy) copyMessages(ctx context.Context, messages []message) error {
	byUID := make(map[imap.UID]message, len(messages))
	for _, msg := range messages {
		byUID[msg.UID] = msg
	}
	for batch := range slices.Chunk(messages, fetchBatch) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f.copyBatch(batch, byUID); err != nil {
			return err
		}
	}
	return f.settleAll()
}

// copyBatch fetches the bodies of batch and appends them: as one
// MULTIAPPEND where the destination has it, else one APPEND each.
func (f *folderCopy) copyBatch(batch []message, byUID map[imap.UID]message) error {
	if f.appender != nil {
		return f.copyBatchMulti(batch, byUID)
	}
	return f.streamBodies(batch, byUID, f.send)
}

// streamBodies fetches the bodies of batch from the source and hands each
// to sink while it streams in. go-imap's reader waits for every literal it
// hands out to be read to its end, so: once sink fails (the destination's
// fault) the rest of the FETCH is read and dropped; once reading the
// source fails, the FETCH is never touched again (reading a failed
// literal a second time races with that reader) and the connection is
// dropped.
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
			src.abandon()
			return src.side.fail(src.name, KindTransient, err)
		}
		if fetched == nil {
			break
		}
		body := &sourceBody{LiteralReader: fetched.Body}
		if msg, ok := byUID[fetched.UID]; ok && sinkErr == nil {
			sinkErr = sink(msg, body)
		}
		if body.err == nil {
			io.Copy(io.Discard, body) //nolint:errcheck // recorded in body.err
		}
		cleanup()
		if body.err != nil {
			src.abandon()
			return src.side.fail(src.name, KindTransient, body.err)
		}
	}
	if err := cmd.Close(); err != nil && sinkErr == nil {
		return src.side.fail(src.name, classify(err), err)
	}
	return sinkErr
}

// sourceBody records a failure to read a body from the source, as opposed
// to a failure to write it to the destination.
type sourceBody struct {
	imap.LiteralReader
	err error
}

func (b *sourceBody) Read(p []byte) (int, error) {
	n, err := b.LiteralReader.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// send starts the APPEND of one message, streaming its body, and settles
// the oldest APPEND when the window is full.
func (f *folderCopy) send(msg message, body imap.LiteralReader) error {
	dst := f.m.destination
	cmd := dst.Append(f.destination, body.Size(), &imap.AppendOptions{
		Flags: f.flags.keep(msg.Flags),
		Time:  msg.Date,
	})
	if _, err := io.Copy(cmd, body); err != nil {
		// Half a literal leaves the connection unusable.
		dst.abandon()
		return dst.side.fail(dst.name, KindTransient, fmt.Errorf("append: %w", err))
	}
	if err := cmd.Close(); err != nil {
		return dst.side.fail(dst.name, KindTransient, fmt.Errorf("append: %w", err))
	}
	msg.Size = body.Size() // what went over the wire
	f.pending = append(f.pending, pendingAppend{msg: msg, cmd: cmd})
	if len(f.pending) >= appendWindow {
		return f.settleOldest()
	}
	return nil
}

// settleOldest waits for the oldest APPEND's answer. A refused message is
// recorded and skipped; a full mailbox or a broken connection ends the
// folder.
func (f *folderCopy) settleOldest() error {
	p := f.pending[0]
	f.pending = f.pending[1:]
	_, err := p.cmd.Wait()
	if err != nil {
		kind := classify(err)
		if kind != KindPermanent {
			dst := f.m.destination
			return dst.side.fail(dst.name, kind, err)
		}
		f.failures = append(f.failures, MessageFailure{UID: uint32(p.msg.UID), Reason: err.Error()})
		f.m.progress.MessagesFailed++
	} else {
		f.m.progress.MessagesCopied++
		f.m.progress.BytesCopied += p.msg.Size
	}
	f.done[p.msg.UID] = true
	f.m.report()
	return nil
}

func (f *folderCopy) settleAll() error {
	for len(f.batches) > 0 {
		if err := f.settleOldestBatch(); err != nil {
			return err
		}
	}
	return f.settleSingles()
}

// copyBatchMulti streams the bodies of batch into one MULTIAPPEND.
func (f *folderCopy) copyBatchMulti(batch []message, byUID map[imap.UID]message) error {
	var cmd *appendBatch
	var sent []message
	err := f.streamBodies(batch, byUID, func(msg message, body imap.LiteralReader) error {
		var err error
		if cmd == nil {
			if cmd, err = f.appender.begin(f.destination); err != nil {
				return err
			}
		}
		msg.Size = body.Size()
		sent = append(sent, msg)
		return cmd.add(f.flags.keep(msg.Flags), msg.Date, body)
	})
	if err == nil && cmd != nil {
		err = cmd.end()
	}
	if err != nil {
		dst := f.m.destination
		return dst.side.fail(dst.name, KindTransient, fmt.Errorf("multiappend: %w", err))
	}
	if cmd == nil {
		return nil // every message of the batch is gone from the source
	}
	f.batches = append(f.batches, pendingBatch{tag: cmd.tag, msgs: sent})
	if len(f.batches) >= batchWindow {
		return f.settleOldestBatch()
	}
	return nil
}

// settleOldestBatch waits for the oldest MULTIAPPEND. The server appends
// all of a batch or none (RFC 3502 §6.3.11): a refused batch is sent again
// one message at a time, so that only the messages the server refuses are
// left out.
func (f *folderCopy) settleOldestBatch() error {
	b := f.batches[0]
	f.batches = f.batches[1:]
	err := f.appender.wait(b.tag)
	switch kind := classify(err); {
	case err == nil:
		for _, msg := range b.msgs {
			f.m.progress.MessagesCopied++
			f.m.progress.BytesCopied += msg.Size
			f.done[msg.UID] = true
		}
		f.m.report()
		return nil
	case kind == KindPermanent:
		f.m.logger.Info("a batch was refused; sending its messages one by one", "folder", f.destination, "err", err)
		byUID := make(map[imap.UID]message, len(b.msgs))
		for _, msg := range b.msgs {
			byUID[msg.UID] = msg
		}
		if err := f.streamBodies(b.msgs, byUID, f.send); err != nil {
			return err
		}
		return f.settleSingles()
	default:
		dst := f.m.destination
		return dst.side.fail(dst.name, kind, err)
	}
}

func (f *folderCopy) settleSingles() error {
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
