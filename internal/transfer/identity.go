package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"mime"
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
// identity; they are counted, not merged. The fields are read as a
// destination may have rewritten them without changing the message
// (normalizeHeader), so a copy whose 8-bit header bytes became "X" keeps
// its source's identity.
func identity(header []byte, size int64) string {
	fields := headerFields(header)
	sizeText := strconv.FormatInt(size, 10)
	if id := normalizeHeader(fields.Get("Message-Id")); id != "" {
		return "id:" + id + "/" + sizeText
	}
	return "hash:" + fieldsDigest(fields, identityHeaders[1:]) + "/" + sizeText
}

// likeness is what a message shares with its copy on a destination that
// re-encoded or refolded its header, which changes its size: a hash of
// all five identity fields, normalized, without the size. Messages alike
// whose sizes are within headerRewriteAllowance are taken for one only
// where their identities found no match (destinationPool.match).
func likeness(header []byte) string {
	return "like:" + fieldsDigest(headerFields(header), identityHeaders)
}

// fieldsDigest hashes the normalized values of the named fields.
func fieldsDigest(fields textproto.MIMEHeader, names []string) string {
	h := sha256.New()
	for _, name := range names {
		h.Write([]byte(normalizeHeader(strings.Join(fields.Values(name), " "))))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// headerRewriteAllowance is how many bytes a destination may add to or
// take from a header it re-encodes or refolds, for its copy to be taken
// for the message (likeness): encoded-words for 8-bit text and folds of
// long lines take a few hundred bytes at most in the five fields.
const headerRewriteAllowance = 2048

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

// encodedWords decodes RFC 2047 encoded-words in the charsets Go knows
// (UTF-8, ISO-8859-1, US-ASCII); a value with others is left as it is.
var encodedWords = mime.WordDecoder{}

// normalizeHeader reads a header value as the destinations that rewrite
// headers leave it recognizable:
//   - its encoded-words decoded, since a server may encode raw 8-bit text
//     (RFC 2047);
//   - every 8-bit byte read as "X", since Cyrus with munge8bit turns each
//     into one: text that differs only there is taken for the same;
//   - unfolded, its white space collapsed, since servers refold long lines.
func normalizeHeader(v string) string {
	if strings.Contains(v, "=?") {
		if decoded, err := encodedWords.DecodeHeader(v); err == nil {
			v = decoded
		}
	}
	// Before the white space: a no-break space is 8-bit, not a space, to
	// a server that munges it.
	b := []byte(v)
	for i, c := range b {
		if c >= 0x80 {
			b[i] = 'X'
		}
	}
	return strings.Join(strings.Fields(string(b)), " ")
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
