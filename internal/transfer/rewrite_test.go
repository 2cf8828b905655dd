package transfer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// encodeSubject rewrites a message as a gateway that will not store raw
// 8-bit headers does: its Subject becomes one RFC 2047 encoded-word on a
// folded line, which makes the copy larger.
func encodeSubject(body []byte) []byte {
	end := bytes.Index(body, []byte("\r\n\r\n"))
	var out []byte
	for _, line := range bytes.SplitAfter(body[:end+2], []byte("\r\n")) {
		if value, ok := bytes.CutPrefix(line, []byte("Subject: ")); ok {
			value = bytes.TrimSuffix(value, []byte("\r\n"))
			line = []byte("Subject:\r\n =?UTF-8?B?" + base64.StdEncoding.EncodeToString(value) + "?=\r\n")
		}
		out = append(out, line...)
	}
	return append(out, body[end+2:]...)
}

// TestAFreshTaskAfterARewriteCopiesNothing: a destination rewrote the
// copies' headers, and a second task without the first one's sync state
// (a new task over the same servers, or a state lost) finds every copy
// and copies nothing. The messages that used to be copied again are those
// without a Message-ID that have 8-bit bytes in their header: Cyrus'
// munge8bit keeps the size, a gateway that encodes the Subject does not.
func TestAFreshTaskAfterARewriteCopiesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		rewrite func([]byte) []byte
	}{
		{"8-bit header bytes made X", munge8bit},
		{"the Subject encoded and folded", encodeSubject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := startFaultServer(t, faultOptions{})
			var msgs []faultMessage
			for i, m := range []struct{ id, subject string }{
				{"", "plain"}, {"", "Café au lait"}, {"", "Grüße aus Köln"}, {"one@example.com", "Ünïcode with an id"},
				{"", "Café au lait"}, // a second message of that subject, another size: not one of the others
			} {
				fm := srvMessage("", i+1)
				fm.Body = mail(m.id, m.subject, 300+i)
				msgs = append(msgs, fm)
			}
			src.seed(t, "INBOX", msgs...)
			dst := startFaultServer(t, faultOptions{RewriteAppend: tc.rewrite})
			first := srvRun(t, srvJob(src.side(), dst.side(), Tuning{}), 1)
			if int(first.MessagesCopied) != len(msgs) {
				t.Fatalf("the first task copied %d messages, want %d", first.MessagesCopied, len(msgs))
			}
			fresh := srvJob(src.side(), dst.side(), Tuning{})
			fresh.State = syncstate.NewMemoryState()
			second := srvRun(t, fresh, 2)
			if second.MessagesCopied != 0 || len(dst.read(t, "INBOX")) != len(msgs) {
				t.Errorf("a fresh task copied %d messages, and the destination holds %d; want none copied and %d held",
					second.MessagesCopied, len(dst.read(t, "INBOX")), len(msgs))
			}
			wantVerified(t, second, 2)
		})
	}
}

// TestNearIdenticalMessagesStayTwo: pairs of messages that differ in one
// character of their Message-ID, or of another identity field where they
// have none, or in their size beyond what a header
// rewrite adds, are never taken for one, whichever way they are read;
// the rewrites a destination makes (8-bit bytes to X, an encoded and
// folded Subject) always are. Random headers, a fixed seed.
func TestNearIdenticalMessagesStayTwo(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 34))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWYZ0123456789éüßø@.<>-"
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(string([]rune(letters)[rng.IntN(len([]rune(letters)))]))
		}
		return b.String()
	}
	fieldNames := []string{"Message-ID", "Date", "From", "To", "Subject"}
	build := func(fields map[string]string, bodySize int) []byte {
		var b strings.Builder
		for _, name := range fieldNames {
			if v, ok := fields[name]; ok {
				fmt.Fprintf(&b, "%s: %s\r\n", name, v)
			}
		}
		b.WriteString("\r\n" + strings.Repeat("b", bodySize))
		return []byte(b.String())
	}
	read := func(body []byte) message {
		header := body[:bytes.Index(body, []byte("\r\n\r\n"))+4]
		return message{UID: 1, Size: int64(len(body)), Identity: identity(header, int64(len(body))), Likeness: likeness(header)}
	}
	takenForOne := func(a, b message) bool {
		b.UID = 2
		pool := newDestinationPool([]message{b})
		_, ok := pool.match([]message{a})[a.UID]
		return ok
	}
	for i := range 2000 {
		fields := map[string]string{}
		for _, name := range fieldNames {
			if name != "Message-ID" || rng.IntN(2) == 0 {
				fields[name] = word() + " " + word()
			}
		}
		bodySize := 100 + rng.IntN(5000)
		original := build(fields, bodySize)

		// One character of one field changed: another message. A message
		// is known by its Message-ID where it has one (docs/design.md#identity).
		other := map[string]string{}
		for k, v := range fields {
			other[k] = v
		}
		name := fieldNames[1+rng.IntN(4)]
		if _, ok := fields["Message-ID"]; ok {
			name = "Message-ID"
		}
		runes := []rune(other[name])
		at := rng.IntN(len(runes))
		runes[at] = map[bool]rune{true: 'q', false: 'r'}[runes[at] != 'q']
		other[name] = string(runes)
		if takenForOne(read(original), read(build(other, bodySize))) {
			t.Fatalf("case %d: %s %q and %q taken for one message", i, name, fields[name], other[name])
		}
		// The same header, a size beyond a rewrite's: another message.
		if takenForOne(read(original), read(build(fields, bodySize+headerRewriteAllowance+1+rng.IntN(1000)))) {
			t.Fatalf("case %d: bodies %d bytes apart taken for one message", i, headerRewriteAllowance+1)
		}
		// What a destination does to a message: still that message.
		for _, rewrite := range []func([]byte) []byte{munge8bit, encodeSubject} {
			if !takenForOne(read(original), read(rewrite(original))) {
				t.Fatalf("case %d: %q and its rewrite %q not taken for one", i, original[:bytes.Index(original, []byte("\r\n\r\n"))], rewrite(original)[:80])
			}
		}
	}
}

// TestExactCopiesAreMatchedFirst: two messages alike (the same five
// fields, bodies 10 bytes apart), one copied as it was and the other with
// its Subject encoded (30 bytes more). The message whose copy was
// rewritten must not take the other's exact copy, nearer in size: exact
// identities are matched first, for every message, and likeness after.
func TestExactCopiesAreMatchedFirst(t *testing.T) {
	t.Parallel()
	build := func(bodySize int) []byte {
		return []byte("Date: Mon, 1 Jan 2024 10:00:00 +0000\r\nFrom: a@x\r\nTo: b@x\r\nSubject: Grüße\r\n\r\n" + strings.Repeat("b", bodySize))
	}
	read := func(uid imap.UID, body []byte) message {
		header := body[:bytes.Index(body, []byte("\r\n\r\n"))+4]
		return message{UID: uid, Size: int64(len(body)), Identity: identity(header, int64(len(body))), Likeness: likeness(header)}
	}
	a, b := read(1, build(1000)), read(2, build(1010))
	rewrittenA, copyOfB := read(11, encodeSubject(build(1000))), read(12, build(1010))
	pool := newDestinationPool([]message{copyOfB, rewrittenA})
	copies := pool.match([]message{a, b})
	if copies[a.UID].UID != rewrittenA.UID || copies[b.UID].UID != copyOfB.UID {
		t.Errorf("message 1 → copy %d, message 2 → copy %d; want 11 and 12", copies[a.UID].UID, copies[b.UID].UID)
	}
}
