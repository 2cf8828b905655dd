package comparison

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// findings says, in kinds and counts, how a destination differs from its
// source, where imaptest.Diff lists every difference. Message counts are
// summed over accounts.
type findings struct {
	renamed           map[string]string // source folder → destination folder its messages went to
	headersAdded      map[string]bool   // header fields a tool added to bodies
	foldersMissing    int
	subscribed        int // source folders subscribed
	subscriptionsLost int
	subscriptionsNew  int
	missing, extra    int // messages
	altered           int // bodies changed
	keywordsLost      int // messages that lost a keyword ($Forwarded, Work, …)
	flagsLost         int // messages that lost a system flag (\Seen, …)
	flagsAdded        int
	datesChanged      int
}

func newFindings() findings {
	return findings{renamed: map[string]string{}, headersAdded: map[string]bool{}}
}

// received is a destination message and whether a source message was
// paired with it.
type received struct {
	msg  imaptest.Message
	used bool
}

// compareCorpora pairs every source message with a destination message
// of the same body (or, failing that, of the same text after the header,
// for a tool that adds header fields), preferring the same folder, and
// counts what the pairs and the folders lost on the way.
func compareCorpora(want, got imaptest.Corpus) findings {
	f := newFindings()
	exact, loose := indexMessages(got.Messages)
	moved := map[string]map[string]int{} // source folder → destination folder → messages
	for _, w := range want.Messages {
		g, byBody := pair(w, exact[bodyKey(w.Body)]), true
		if g == nil {
			g, byBody = pair(w, loose[textKey(w.Body)]), false
		}
		if g == nil {
			f.missing++
			continue
		}
		if moved[w.Folder] == nil {
			moved[w.Folder] = map[string]int{}
		}
		moved[w.Folder][g.Folder]++
		f.compareMessage(w, *g, byBody)
	}
	for _, list := range exact {
		for _, r := range list {
			f.extra += boolInt(!r.used)
		}
	}
	f.compareFolders(want.Folders, got.Folders, moved)
	return f
}

func indexMessages(msgs []imaptest.Message) (exact, loose map[string][]*received) {
	exact, loose = map[string][]*received{}, map[string][]*received{}
	for _, m := range msgs {
		r := &received{msg: m}
		exact[bodyKey(m.Body)] = append(exact[bodyKey(m.Body)], r)
		loose[textKey(m.Body)] = append(loose[textKey(m.Body)], r)
	}
	return exact, loose
}

// pair takes an unused candidate for w, one in w's folder if there is.
func pair(w imaptest.Message, candidates []*received) *imaptest.Message {
	var pick *received
	for _, r := range candidates {
		if !r.used && (pick == nil || r.msg.Folder == w.Folder) {
			pick = r
		}
	}
	if pick == nil {
		return nil
	}
	pick.used = true
	return &pick.msg
}

func (f *findings) compareMessage(w, g imaptest.Message, sameBody bool) {
	if !sameBody {
		f.altered++
		for _, name := range addedHeaderFields(w.Body, g.Body) {
			f.headersAdded[name] = true
		}
	}
	lostKeyword, lostFlag, added := compareFlags(w.Flags, g.Flags)
	f.keywordsLost += boolInt(lostKeyword)
	f.flagsLost += boolInt(lostFlag)
	f.flagsAdded += boolInt(added)
	f.datesChanged += boolInt(!w.Date.Equal(g.Date))
}

// compareFlags reports whether got lacks a keyword or a system flag of
// want, and whether it has one want lacks. Flags are case-insensitive
// (RFC 9051 §2.3.2).
func compareFlags(want, got []imap.Flag) (lostKeyword, lostFlag, added bool) {
	w, g := flagSet(want), flagSet(got)
	for flag := range w {
		if !g[flag] {
			lostKeyword = lostKeyword || !strings.HasPrefix(flag, `\`)
			lostFlag = lostFlag || strings.HasPrefix(flag, `\`)
		}
	}
	for flag := range g {
		added = added || !w[flag]
	}
	return lostKeyword, lostFlag, added
}

func flagSet(flags []imap.Flag) map[string]bool {
	set := map[string]bool{}
	for _, f := range flags {
		set[strings.ToLower(string(f))] = true
	}
	return set
}

// compareFolders finds where each source folder's messages went (the
// destination folder most of them are in), and checks that the folder,
// empty or not, exists there with its subscription.
func (f *findings) compareFolders(want, got []imaptest.Folder, moved map[string]map[string]int) {
	subscribed := map[string]bool{}
	for _, g := range got {
		subscribed[g.Name] = subscribed[g.Name] || g.Subscribed
	}
	for _, w := range want {
		name := w.Name
		if dest := mostOf(moved[w.Name]); dest != "" {
			name = dest
		}
		if name != w.Name {
			f.renamed[w.Name] = name
		}
		sub, exists := subscribed[name]
		f.foldersMissing += boolInt(!exists)
		f.subscribed += boolInt(w.Subscribed)
		f.subscriptionsLost += boolInt(w.Subscribed && exists && !sub)
		f.subscriptionsNew += boolInt(!w.Subscribed && sub)
	}
}

// mostOf returns the key with the largest count; the least name on a tie.
func mostOf(counts map[string]int) string {
	best := ""
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if best == "" || counts[k] > counts[best] {
			best = k
		}
	}
	return best
}

// add sums o into f, for the accounts of a run.
func (f *findings) add(o findings) {
	maps.Copy(f.renamed, o.renamed)
	maps.Copy(f.headersAdded, o.headersAdded)
	f.foldersMissing += o.foldersMissing
	f.subscribed += o.subscribed
	f.subscriptionsLost += o.subscriptionsLost
	f.subscriptionsNew += o.subscriptionsNew
	f.missing += o.missing
	f.extra += o.extra
	f.altered += o.altered
	f.keywordsLost += o.keywordsLost
	f.flagsLost += o.flagsLost
	f.flagsAdded += o.flagsAdded
	f.datesChanged += o.datesChanged
}

// String is a short summary, such as "keywords lost (1 204 msgs),
// subscriptions lost (80/88), 3 folders renamed (\Sent→Sent Items, …)".
func (f findings) String() string {
	var parts []string
	add := func(n int, format string, args ...any) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf(format, args...))
		}
	}
	add(f.missing, "%d msgs missing", f.missing)
	add(f.extra, "%d msgs extra", f.extra)
	add(f.altered, "bodies altered%s (%d msgs)", headerNote(f.headersAdded), f.altered)
	add(f.keywordsLost, "keywords lost (%d msgs)", f.keywordsLost)
	add(f.flagsLost, "flags lost (%d msgs)", f.flagsLost)
	add(f.flagsAdded, "flags added (%d msgs)", f.flagsAdded)
	add(f.datesChanged, "dates changed (%d msgs)", f.datesChanged)
	add(f.subscriptionsLost, "subscriptions lost (%d/%d)", f.subscriptionsLost, f.subscribed)
	add(f.subscriptionsNew, "subscriptions added (%d)", f.subscriptionsNew)
	add(f.foldersMissing, "folders missing (%d)", f.foldersMissing)
	add(len(f.renamed), "%d folders renamed (%s)", len(f.renamed), renames(f.renamed))
	return strings.Join(parts, ", ")
}

func headerNote(fields map[string]bool) string {
	if len(fields) == 0 {
		return ""
	}
	return ": " + strings.Join(slices.Sorted(maps.Keys(fields)), ", ") + " added"
}

func renames(m map[string]string) string {
	var list []string
	for _, from := range slices.Sorted(maps.Keys(m)) {
		list = append(list, from+"→"+m[from])
	}
	return strings.Join(list, ", ")
}

// addedHeaderFields names the header fields of got's header that want's
// lacks, line by line.
func addedHeaderFields(want, got []byte) []string {
	have := map[string]bool{}
	for _, line := range headerLines(want) {
		have[line] = true
	}
	var names []string
	for _, line := range headerLines(got) {
		if name, _, ok := strings.Cut(line, ":"); ok && !have[line] && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func headerLines(body []byte) []string {
	header, _, _ := bytes.Cut(body, []byte("\r\n\r\n"))
	return strings.Split(string(header), "\r\n")
}

func bodyKey(body []byte) string {
	sum := sha256.Sum256(body)
	return string(sum[:])
}

// textKey identifies a message by what follows its header (RFC 5322 §2.1).
func textKey(body []byte) string {
	_, text, _ := bytes.Cut(body, []byte("\r\n\r\n"))
	return bodyKey(text)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
