package transfer

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// FuzzTranslateNameRoundTrip checks that translating a folder name to
// another server's hierarchy and back gives the name again, for every pair
// of the usual namespaces (personal prefix "" or "INBOX" + delimiter, with
// "/" or "."), wherever the translation is not lossy by design (a part
// holding the other delimiter becomes "_"; children of INBOX on a server
// without prefix cannot be told from top-level folders on one with it).
func FuzzTranslateNameRoundTrip(f *testing.F) {
	for _, rel := range []string{"Projects/2024", "Projects.2024", "Sent", "a//b", "", "Ünïcode/日本", "x/", "/y", "inboxes/x"} {
		for _, flags := range []uint8{0, 1, 2, 3, 5, 15} {
			f.Add(rel, flags)
		}
	}
	f.Fuzz(func(t *testing.T, rel string, flags uint8) {
		src, dst := usualNamespace(flags&1 != 0, flags&2 != 0), usualNamespace(flags&4 != 0, flags&8 != 0)
		rel = losslessName(rel, src, dst)
		name := src.Prefix + rel
		there := translateName(name, src, dst)
		if !strings.HasPrefix(there, dst.Prefix) {
			t.Fatalf("translateName(%q, %+v, %+v) = %q, outside the destination's prefix", name, src, dst, there)
		}
		if back := translateName(there, dst, src); back != name {
			t.Fatalf("%q → %q → %q (%q%c → %q%c)", name, there, back, src.Prefix, src.Delim, dst.Prefix, dst.Delim)
		}
	})
}

// losslessName makes rel a name the translation keeps: the parts lose
// the destination's delimiter (renamed "_" by design), and a first part
// INBOX, whose children are ambiguous between the layouts, gets another
// name.
func losslessName(rel string, src, dst namespace) string {
	if dst.Delim != src.Delim {
		rel = strings.ReplaceAll(rel, string(dst.Delim), "_")
	}
	if first, _, _ := strings.Cut(rel, string(src.Delim)); strings.EqualFold(first, "INBOX") {
		rel = "not-" + rel
	}
	return rel
}

func usualNamespace(prefixed, slash bool) namespace {
	ns := namespace{Delim: '.'}
	if slash {
		ns.Delim = '/'
	}
	if prefixed {
		ns.Prefix = "INBOX" + string(ns.Delim)
	}
	return ns
}

var identityRE = regexp.MustCompile(`^(id:.+|hash:[0-9a-f]{32})/(-?[0-9]+)$`)

// FuzzIdentity checks, for any header block, that the identity is well
// formed and ends in the size; and for headers built from fuzzed values,
// that it ignores what servers change in transit (folding, the order and
// case of the fields) and uses the Message-ID exactly when there is one.
func FuzzIdentity(f *testing.F) {
	f.Add("<abc@example.com>", "Mon, 1 Jan 2024 10:00:00 +0000", "Alice <a@x>", "b@x", "hello world", int64(10))
	f.Add("", "Mon, 1 Jan 2024 10:00:00 +0000", "a@x", "b@x, c@x", "a  long   subject", int64(0))
	f.Add("  ", "", "", "", "", int64(-1))
	f.Add("<a b>", "x", "=?utf-8?q?=C3=A9?=", "", "Ünïcode", int64(1<<40))
	f.Fuzz(func(t *testing.T, messageID, date, from, to, subject string, size int64) {
		values := []string{messageID, date, from, to, subject}
		raw := []byte(strings.Join(values, "\r\n"))
		if id := identity(raw, size); !identityRE.MatchString(id) || !strings.HasSuffix(id, "/"+strconv.FormatInt(size, 10)) {
			t.Fatalf("identity(%q, %d) = %q: malformed", raw, size, id)
		}
		// Header values come unfolded, trimmed and UTF-8 from the parser.
		for i, v := range values {
			values[i] = strings.TrimSpace(strings.ToValidUTF8(strings.NewReplacer("\r", "", "\n", "", "\x00", "").Replace(v), "\uFFFD"))
		}
		messageID = values[0]
		names := []string{"Message-ID", "Date", "From", "To", "Subject"}
		var plain, transit []string
		for i, v := range values {
			plain = append(plain, names[i]+": "+v)
			// In transit: names in another case, long lines refolded at
			// their first space, the fields in reverse order.
			transit = append([]string{strings.ToUpper(names[i]) + ":\r\n " + strings.Replace(v, " ", "\r\n\t", 1)}, transit...)
		}
		id := identity([]byte(strings.Join(plain, "\r\n")+"\r\n"), size)
		if again := identity([]byte(strings.Join(transit, "\r\n")+"\r\n"), size); again != id {
			t.Fatalf("identity changed in transit: %q, then %q", id, again)
		}
		if hasID := strings.HasPrefix(id, "id:"); hasID != (messageID != "") {
			t.Fatalf("Message-ID %q gave identity %q", messageID, id)
		}
	})
}
