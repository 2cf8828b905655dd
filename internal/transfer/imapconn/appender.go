package imapconn

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
)

// Appender writes every APPEND of a migration by hand, on the
// destination session's connection between go-imap's commands
// (sharedConn): go-imap v2's client has no MULTIAPPEND (RFC 3502), and
// it closes its connection when a server refuses a message instead of
// asking for its literal (RFC 9051 §7.5), which a server without LITERAL+
// does for a message over its size limit. One MULTIAPPEND carries a whole
// batch of messages: the destination commits them at once, which costs a
// server such as Dovecot a fraction of one APPEND per message. With
// LITERAL+ (RFC 7888) bodies stream without waiting for the server, and
// several commands may be on the wire at once. The same hand-written
// commands serve LSUB (lsub.go), which go-imap v2 lacks too, and, on a
// connection of their own, Gmail's labels (the engine's gmail.go).
type Appender struct {
	conn        *idleConn
	r           *bufio.Reader
	w           *bufio.Writer
	literalPlus bool
	multiAppend bool
	uidPlus     bool
	appendLimit int64 // the largest message the server takes (APPENDLIMIT=N); 0: none said
	tags        int
	// completed holds the completions read while waiting for something
	// else (a continuation request), by tag.
	completed map[string]Completion
	// writing is set while an APPEND is half written: a LOGOUT then would
	// be read as part of its message.
	writing bool
	sideOf
	// onCapability, while set, receives the words of a CAPABILITY response.
	onCapability func(words []string)
	// OnUntagged, while set, receives every other untagged response
	// without its "* ".
	OnUntagged func(response string)
	// KeepLiterals makes readLine put literals into the line as quoted
	// strings instead of dropping them.
	KeepLiterals bool
	stop         func() bool
	// bye is the text of the server's untagged BYE, once it sent one.
	bye string
	// shared is the session's connection this writer borrows (see
	// sharedConn), nil on a connection of its own; unanswered counts its
	// commands sent and not answered yet.
	shared     *sharedConn
	unanswered int
}

// answerGrace is how long the destination has to answer the APPENDs on
// the wire once a migration stops for another reason (a cancel, the
// source failing): answered, their copies are mapped; unanswered, they
// are in doubt.
const answerGrace = 2 * time.Second

// appendBufferSize is the appender's write buffer.
const appendBufferSize = 64 << 10

// Completion is a command's tagged answer: nil for OK, else an
// *imap.Error; and for an APPEND, the UIDs of the appended messages where
// the server tells them (RFC 4315 §3, APPENDUID).
type Completion struct {
	Err  error
	UIDs []imap.UID
}

// configure sets what the APPENDs may use of the server's capabilities.
func (a *Appender) configure(caps map[imap.Cap]bool, singleAppend bool) {
	a.literalPlus = caps[imap.CapLiteralPlus]
	a.multiAppend = caps[imap.CapMultiAppend] && !singleAppend
	a.uidPlus = caps[imap.CapUIDPlus] || caps[imap.CapIMAP4rev2]
	a.appendLimit = AppendLimit(caps)
}

// MaxMessageBytes is the largest message the server takes, by its
// APPENDLIMIT; 0 when it said none.
func (a *Appender) MaxMessageBytes() int64 { return a.appendLimit }

// Batches reports whether several messages go out in one APPEND
// (MULTIAPPEND).
func (a *Appender) Batches() bool { return a.multiAppend }

// AnsweredMeanwhile takes the answer to the command tagged tag when it
// was read while waiting for something else (a continuation request).
func (a *Appender) AnsweredMeanwhile(tag string) (Completion, bool) {
	done, ok := a.completed[tag]
	delete(a.completed, tag)
	return done, ok
}

// GiveTimeToAnswer leaves the server answerGrace to answer the commands
// on the wire when a copy stops for another reason (a cancel, the source
// failing); then every read and write fails.
func (a *Appender) GiveTimeToAnswer() { a.conn.expire(time.Now().Add(answerGrace)) }

// busy reports whether a command of this writer is half written or not
// answered yet.
func (a *Appender) busy() bool { return a.writing || a.unanswered > 0 }

// AppendLimit is the largest message the server takes, by its
// APPENDLIMIT=N (RFC 7889); 0 when it announces none, or APPENDLIMIT
// without a number (limits per mailbox, not known here).
func AppendLimit(caps map[imap.Cap]bool) int64 {
	for c := range caps {
		if n, ok := strings.CutPrefix(string(c), "APPENDLIMIT="); ok {
			if limit, err := strconv.ParseInt(n, 10, 64); err == nil && limit > 0 {
				return limit
			}
		}
	}
	return 0
}

// quoteEscaper escapes a quoted string's backslashes and quotes (RFC 9051
// §4.3).
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// Quote quotes s as an IMAP quoted string (RFC 9051 §4.3). Logins,
// passwords and folder names hold no CR, LF or NUL (the domain refuses
// them).
func Quote(s string) string {
	return `"` + quoteEscaper.Replace(s) + `"`
}

// Command sends one simple Command and waits for its completion.
func (a *Appender) Command(text string) error {
	tag := a.nextTag()
	if _, err := a.w.WriteString(tag + " " + text + "\r\n"); err != nil {
		return err
	}
	if err := a.w.Flush(); err != nil {
		return err
	}
	return a.Wait(tag).Err
}

func (a *Appender) nextTag() string {
	a.tags++
	a.unanswered++
	return "M" + strconv.Itoa(a.tags)
}

// AppendBatch is one APPEND command being written: one message, or a
// batch of them with MULTIAPPEND.
type AppendBatch struct {
	a   *Appender
	Tag string
	// Refused is set when the server Refused the command instead of
	// asking for a literal: the command is over, nothing of it was saved.
	Refused error
}

// Begin starts an APPEND to mailbox.
func (a *Appender) Begin(mailbox string) (*AppendBatch, error) {
	tag := a.nextTag()
	a.writing = true
	_, err := a.w.WriteString(tag + " APPEND " + Quote(EncodeMailboxName(mailbox)))
	return &AppendBatch{a: a, Tag: tag}, err
}

// Add writes one message of the batch, streaming its body. A server that
// refuses the message instead of asking for its body ends the command:
// Add returns the refusal, the caller drops the rest of the body and
// must not end the batch.
func (b *AppendBatch) Add(flags []imap.Flag, date time.Time, body imap.LiteralReader) error {
	w := b.a.w
	w.WriteString(" (")
	for i, f := range flags {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(string(f))
	}
	w.WriteString(") \"" + date.Format("_2-Jan-2006 15:04:05 -0700") + "\" ")
	if err := b.a.literal(b.Tag, body.Size()); err != nil {
		if isRefusal(err) {
			b.Refused, b.a.writing = err, false
		}
		return err
	}
	_, err := io.Copy(w, body)
	return err
}

// isRefusal reports whether err is a server's tagged NO or BAD, as
// opposed to a broken connection.
func isRefusal(err error) bool {
	var imapErr *imap.Error
	return errors.As(err, &imapErr)
}

// literal announces n bytes of command tag: at once with LITERAL+, else
// after the server's continuation request (RFC 9051 §7.5). A tagged
// answer to tag instead of the request is the server refusing the
// command, returned as an *imap.Error.
func (a *Appender) literal(tag string, n int64) error {
	if a.literalPlus {
		_, err := a.w.WriteString("{" + strconv.FormatInt(n, 10) + "+}\r\n")
		return err
	}
	if _, err := a.w.WriteString("{" + strconv.FormatInt(n, 10) + "}\r\n"); err != nil {
		return err
	}
	return a.continuation(tag, "an APPEND before its message")
}

// continuation sends what is buffered and waits for the server's "+" to
// go on with command tag, handling other answers meanwhile; the command's
// own answer instead ends it (an error: it cannot complete before the
// rest, what, was sent).
func (a *Appender) continuation(tag, what string) error {
	if err := a.w.Flush(); err != nil {
		return err
	}
	for {
		line, err := a.readLine()
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, "+") {
			return nil
		}
		if done, ok := a.dispatch(line); ok && done == tag {
			c := a.completed[tag]
			delete(a.completed, tag)
			if c.Err == nil {
				return fmt.Errorf("the server completed %s was sent", what)
			}
			return c.Err
		}
	}
}

// End finishes the command and sends it on its way.
func (b *AppendBatch) End() error {
	if _, err := b.a.w.WriteString("\r\n"); err != nil {
		return err
	}
	b.a.writing = false
	return b.a.w.Flush()
}

// Throttled reads, for a moment, what the server said before the
// connection failed, and returns a throttling answer among the
// completions, if any: Exchange Online answers NO with a suggested backoff
// and closes the connection, which a pipelined APPEND may hit first.
func (a *Appender) Throttled() error {
	a.conn.expire(time.Now().Add(time.Second))
	for {
		for _, c := range a.completed {
			if c.Err != nil && Classify(c.Err) == KindThrottled {
				return c.Err
			}
		}
		line, err := a.readLine()
		if err != nil {
			// The server may have said why it closed: a BYE that asks
			// to come back later.
			if err := a.WithBye(err); Classify(err) == KindThrottled {
				return err
			}
			return nil
		}
		a.dispatch(line)
	}
}

// Wait reads responses up to the completion of tag.
func (a *Appender) Wait(tag string) Completion {
	for {
		if c, ok := a.completed[tag]; ok {
			delete(a.completed, tag)
			return c
		}
		line, err := a.readLine()
		if err != nil {
			return Completion{Err: a.WithBye(err)}
		}
		a.dispatch(line)
	}
}

// WithBye adds to a connection failure the words of the BYE the server
// sent before it, if it sent one.
func (a *Appender) WithBye(err error) error {
	if a.bye == "" {
		return err
	}
	return &byeError{text: a.bye, err: err}
}

// dispatch handles one response line: untagged ones go to the hooks, a
// completion is kept by its tag, which dispatch returns.
func (a *Appender) dispatch(line string) (tag string, completed bool) {
	if rest, ok := strings.CutPrefix(line, "* "); ok {
		words := strings.Fields(rest)
		switch {
		case len(words) > 0 && strings.EqualFold(words[0], "CAPABILITY"):
			if a.onCapability != nil {
				a.onCapability(words[1:])
			}
		case len(words) > 0 && strings.EqualFold(words[0], "BYE"):
			a.bye = strings.TrimSpace(rest[len(words[0]):])
		case a.shared != nil && clientsResponse(rest):
			a.shared.giveBack(line + "\r\n")
		case a.OnUntagged != nil:
			a.OnUntagged(rest)
		}
		return "", false
	}
	tag, rest, ok := strings.Cut(line, " ")
	if !ok || strings.HasPrefix(line, "+") {
		return "", false
	}
	a.unanswered--
	if strings.HasPrefix(strings.ToUpper(rest), "OK") {
		a.completed[tag] = Completion{UIDs: appendUIDs(rest)}
	} else {
		a.completed[tag] = Completion{Err: responseError(line)}
	}
	return tag, true
}

// appendUIDs reads the UIDs of "OK [APPENDUID uidvalidity uid-set] ..."
// (RFC 4315 §3), in the order of the appended messages; nil without.
func appendUIDs(ok string) []imap.UID {
	text := strings.TrimSpace(ok[2:])
	code, _, found := strings.Cut(strings.TrimPrefix(text, "["), "]")
	if !found || !strings.HasPrefix(text, "[") {
		return nil
	}
	words := strings.Fields(code)
	if len(words) != 3 || !strings.EqualFold(words[0], "APPENDUID") {
		return nil
	}
	return parseUIDSequence(words[2])
}

// parseUIDSequence reads "4,7:9" as 4 7 8 9; nil when malformed.
func parseUIDSequence(set string) []imap.UID {
	var uids []imap.UID
	for _, part := range strings.Split(set, ",") {
		lo, hi, isRange := strings.Cut(part, ":")
		first, err := strconv.ParseUint(lo, 10, 32)
		last := first
		if err == nil && isRange {
			last, err = strconv.ParseUint(hi, 10, 32)
		}
		if err != nil || first == 0 || last < first || last-first > 1<<20 {
			return nil
		}
		for uid := first; uid <= last; uid++ {
			uids = append(uids, imap.UID(uid))
		}
	}
	return uids
}

// readLine reads one response line without its CRLF. A line announcing a
// literal gets the literal read and dropped (no response to MULTIAPPEND
// needs one) or, with keepLiterals, put in its place as a quoted string.
func (a *Appender) readLine() (string, error) {
	line, err := a.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if i := strings.LastIndexByte(line, '{'); i >= 0 && strings.HasSuffix(line, "}") {
		if n, err := strconv.ParseInt(strings.TrimSuffix(line[i+1:len(line)-1], "+"), 10, 64); err == nil {
			literal, err := a.readLiteral(n)
			if err != nil {
				return "", err
			}
			more, err := a.readLine()
			return line[:i] + literal + more, err
		}
	}
	return line, nil
}

// maxKeptLiteral bounds a literal kept in a line: a folder name is short.
const maxKeptLiteral = 64 << 10

// readLiteral reads a literal of n bytes: dropped, or as a quoted string.
func (a *Appender) readLiteral(n int64) (string, error) {
	if !a.KeepLiterals || n > maxKeptLiteral {
		_, err := io.CopyN(io.Discard, a.r, n)
		return "", err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(a.r, buf); err != nil {
		return "", err
	}
	return `"` + quoteEscaper.Replace(string(buf)) + `"`, nil
}

// responseError turns "tag NO [CODE ...] text" into an *imap.Error, so that
// Classify can judge it like any other server answer.
func responseError(line string) error {
	_, rest, _ := strings.Cut(line, " ")
	typ, text, _ := strings.Cut(rest, " ")
	e := &imap.Error{Type: imap.StatusResponseType(strings.ToUpper(typ)), Text: text}
	if code, after, ok := strings.Cut(strings.TrimPrefix(text, "["), "]"); ok && strings.HasPrefix(text, "[") {
		name, _, _ := strings.Cut(code, " ")
		e.Code, e.Text = imap.ResponseCode(strings.ToUpper(name)), strings.TrimSpace(after)
	}
	return e
}

// Close logs out, or only closes the connection in the middle of a
// command: the server then drops the half-sent message. A writer on a
// session's connection hands it back instead, or closes it when answers
// are still to come, which the session's client would take for its own.
func (a *Appender) Close() {
	a.stop()
	if a.shared != nil {
		if a.busy() {
			a.shared.Close()
			return
		}
		a.shared.reclaim() //nolint:errcheck // not busy: cannot fail
		return
	}
	if !a.writing {
		a.w.WriteString(a.nextTag() + " LOGOUT\r\n")
		a.w.Flush()
	}
	a.conn.Close()
}
