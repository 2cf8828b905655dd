package imaptest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/mail"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/emersion/go-imap/v2"
)

// fingerprint hashes everything of a corpus, dates with their zone.
func fingerprint(c Corpus) string {
	h := sha256.New()
	fmt.Fprintf(h, "%v\n", c.Folders)
	for _, m := range c.Messages {
		fmt.Fprintf(h, "%s|%v|%s|%d\n", m.Folder, m.Flags, m.Date.Format("2006-01-02T15:04:05-07:00"), len(m.Body))
		h.Write(m.Body)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestBuildCorpusIsDeterministic(t *testing.T) {
	t.Parallel()
	opts := CorpusOptions{Seed: 7, Messages: 200, LargeMessages: 2, LargeSize: 100 << 10}
	a, b := fingerprint(BuildCorpus(opts)), fingerprint(BuildCorpus(opts))
	if a != b {
		t.Fatal("same options, different corpora")
	}
	opts.Seed = 8
	if fingerprint(BuildCorpus(opts)) == a {
		t.Fatal("another seed, same corpus")
	}
}

func TestBuildCorpusHasEveryFeature(t *testing.T) {
	t.Parallel()
	for _, seed := range []int64{1, 2, 3} {
		opts := CorpusOptions{Seed: seed, Messages: 150, LargeMessages: 3, LargeSize: 200 << 10}
		c := BuildCorpus(opts)
		checkFolders(t, c)
		checkMessages(t, c, opts)
	}
}

func TestBuildCorpusRaisesTooFewMessages(t *testing.T) {
	t.Parallel()
	c := BuildCorpus(CorpusOptions{Seed: 1, Messages: 3})
	if len(c.Messages) != MinMessages {
		t.Errorf("%d messages, want MinMessages = %d", len(c.Messages), MinMessages)
	}
	if got := len(BuildCorpus(CorpusOptions{Seed: 1, Messages: 100, LargeMessages: 1, LargeSize: 1000}).Messages); got != 101 {
		t.Errorf("%d messages, want 101", got)
	}
}

func checkFolders(t *testing.T, c Corpus) {
	t.Helper()
	names := map[string]bool{}
	deepest, nonASCII := 0, 0
	for _, f := range c.Folders {
		names[f.Name] = true
		deepest = max(deepest, strings.Count(f.Name, "/")+1)
		if !isASCII(f.Name) {
			nonASCII++
		}
		if strings.Contains(f.Name, ".") {
			t.Errorf("folder %q: LayoutDotInbox cannot hold a dot", f.Name)
		}
	}
	for _, want := range append([]string{"INBOX"}, rolesAsStrings()...) {
		if !names[want] {
			t.Errorf("no folder %s", want)
		}
	}
	if deepest < 3 {
		t.Errorf("folders nest %d deep, want 3", deepest)
	}
	if nonASCII < 2 {
		t.Errorf("%d non-ASCII folder names, want some", nonASCII)
	}
	if len(c.InFolder("Empty")) != 0 || !names["Empty"] {
		t.Error("want an empty folder")
	}
}

func rolesAsStrings() []string {
	var list []string
	for _, r := range Roles {
		list = append(list, string(r))
	}
	return list
}

// features counted over a corpus.
type featureCount struct {
	flags                  map[imap.Flag]int
	years, zones           map[int]int
	noID, eightBit, dupes  int
	plain, alt, mixed, big int
	sharedID               map[string]int
}

func checkMessages(t *testing.T, c Corpus, opts CorpusOptions) {
	t.Helper()
	n := countFeatures(t, c, opts)
	for _, f := range []imap.Flag{imap.FlagSeen, imap.FlagAnswered, imap.FlagFlagged, imap.FlagDraft,
		imap.FlagForwarded, imap.FlagMDNSent, imap.FlagJunk, keywordLabel1, keywordWork} {
		if n.flags[f] == 0 {
			t.Errorf("no message with %s", f)
		}
	}
	if len(n.years) < 5 {
		t.Errorf("INTERNALDATEs over %d years, want several", len(n.years))
	}
	if len(n.zones) < 4 || n.zones[0] == len(c.Messages) {
		t.Errorf("INTERNALDATEs in zones %v, want several not UTC", n.zones)
	}
	if n.noID == 0 || n.eightBit == 0 || n.dupes < 2 {
		t.Errorf("%d without Message-ID, %d with 8-bit headers, %d exact duplicates: want some of each", n.noID, n.eightBit, n.dupes)
	}
	if n.plain == 0 || n.alt == 0 || n.mixed == 0 || n.big != opts.LargeMessages {
		t.Errorf("plain %d, alternative %d, mixed %d, large %d (want %d)", n.plain, n.alt, n.mixed, n.big, opts.LargeMessages)
	}
	shared := false
	for _, k := range n.sharedID {
		shared = shared || k > 1
	}
	if !shared {
		t.Error("no two distinct messages share a Message-ID")
	}
	if len(c.Messages) != opts.Messages+opts.LargeMessages {
		t.Errorf("%d messages, want %d", len(c.Messages), opts.Messages+opts.LargeMessages)
	}
}

func countFeatures(t *testing.T, c Corpus, opts CorpusOptions) featureCount {
	t.Helper()
	n := featureCount{flags: map[imap.Flag]int{}, years: map[int]int{}, zones: map[int]int{}, sharedID: map[string]int{}}
	folders := map[string]bool{}
	for _, f := range c.Folders {
		folders[f.Name] = true
	}
	bodies := map[string]map[string]int{} // folder → body → count
	for i, m := range c.Messages {
		checkWellFormed(t, i, m, opts)
		if !folders[m.Folder] {
			t.Errorf("message %d in unknown folder %q", i, m.Folder)
		}
		for _, f := range m.Flags {
			n.flags[f]++
		}
		n.years[m.Date.Year()]++
		_, off := m.Date.Zone()
		n.zones[off]++
		hdr, _, _ := bytes.Cut(m.Body, []byte("\r\n\r\n"))
		if !bytes.Contains(hdr, []byte("\r\nMessage-ID:")) {
			n.noID++
		}
		if !isASCII(string(hdr)) {
			n.eightBit++
		}
		switch {
		case len(m.Body) > 100<<10:
			n.big++
		case bytes.Contains(hdr, []byte("multipart/alternative")):
			n.alt++
		case bytes.Contains(hdr, []byte("multipart/mixed")):
			n.mixed++
		default:
			n.plain++
		}
		if msg, err := mail.ReadMessage(bytes.NewReader(m.Body)); err == nil && msg.Header.Get("Message-ID") != "" {
			n.sharedID[msg.Header.Get("Message-ID")]++
		}
		if bodies[m.Folder] == nil {
			bodies[m.Folder] = map[string]int{}
		}
		if bodies[m.Folder][string(m.Body)]++; bodies[m.Folder][string(m.Body)] == 2 {
			n.dupes++
		}
	}
	return n
}

// checkWellFormed checks what Dovecot needs to give a message back byte
// for byte: CRLF line ends only, no NUL, valid UTF-8, sane sizes.
func checkWellFormed(t *testing.T, i int, m Message, opts CorpusOptions) {
	t.Helper()
	b := m.Body
	if bytes.Count(b, []byte("\n")) != bytes.Count(b, []byte("\r\n")) || bytes.Count(b, []byte("\r")) != bytes.Count(b, []byte("\r\n")) {
		t.Errorf("message %d: bare CR or LF", i)
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) || !bytes.HasSuffix(b, []byte("\r\n")) {
		t.Errorf("message %d: NUL, invalid UTF-8 or no final CRLF", i)
	}
	if _, err := mail.ReadMessage(bytes.NewReader(b)); err != nil {
		t.Errorf("message %d: %v", i, err)
	}
	large := len(b) > 100<<10
	switch {
	case large && (len(b) < opts.LargeSize || len(b) > opts.LargeSize+8<<10):
		t.Errorf("large message %d: %d bytes, want about %d", i, len(b), opts.LargeSize)
	case !large && (len(b) < 1<<10 || len(b) > 50<<10):
		t.Errorf("message %d: %d bytes, want 1–50 KB", i, len(b))
	}
	if m.Date.Nanosecond() != 0 || m.Date.IsZero() {
		t.Errorf("message %d: date %v, want whole seconds", i, m.Date)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
