package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/emersion/go-imap/v2"
)

// identityHeaders are the header fields a message's identity is made of.
var identityHeaders = []string{"Message-Id", "Date", "From", "To", "Subject"}

// identitySection fetches just those fields, without setting \Seen.
var identitySection = &imap.FetchItemBodySection{
	Specifier:    imap.PartSpecifierHeader,
	HeaderFields: []string{"MESSAGE-ID", "DATE", "FROM", "TO", "SUBJECT"},
	Peek:         true,
}

// identity names a message for comparison across servers (docs/design.md#identity): its
// Message-ID and size, or where it has none a hash of its Date, From, To
// and Subject and its size. Identical copies of one message share an
// identity; they are counted, not merged.
func identity(header []byte, size int64) string {
	fields := headerFields(header)
	sizeText := strconv.FormatInt(size, 10)
	if id := normalizeHeader(fields.Get("Message-Id")); id != "" {
		return "id:" + id + "/" + sizeText
	}
	h := sha256.New()
	for _, name := range identityHeaders[1:] {
		h.Write([]byte(normalizeHeader(strings.Join(fields.Values(name), " "))))
		h.Write([]byte{0})
	}
	return "hash:" + hex.EncodeToString(h.Sum(nil)[:16]) + "/" + sizeText
}

// headerFields reads the fields of a header block leniently. net/textproto
// stops at the first malformed line (a control character, a line without a
// colon), which would hide the Message-ID after it and make different
// messages of one size look alike, so that all but one were skipped as
// already copied. Here such a line is passed over, and the rest is read.
func headerFields(header []byte) textproto.MIMEHeader {
	fields := textproto.MIMEHeader{}
	var last string // the field a continuation line belongs to; "" after a bad line
	for _, line := range strings.Split(strings.ReplaceAll(string(header), "\r\n", "\n"), "\n") {
		switch {
		case line == "":
			return fields // the end of the header (RFC 5322 §2.1)
		case line[0] == ' ' || line[0] == '\t': // folded (RFC 5322 §2.2.3)
			if values := fields[last]; last != "" {
				values[len(values)-1] += line
			}
		default:
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				last = ""
				continue
			}
			last = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name))
			fields[last] = append(fields[last], value)
		}
	}
	return fields
}

// normalizeHeader unfolds a header value and collapses its white space,
// since servers may refold long lines.
func normalizeHeader(v string) string {
	return strings.Join(strings.Fields(v), " ")
}

// multiset counts identities.
type multiset map[string]int

// take removes one copy of id and reports whether there was one.
func (m multiset) take(id string) bool {
	if m[id] == 0 {
		return false
	}
	m[id]--
	return true
}
