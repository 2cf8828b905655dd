package imaptest

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
)

// Folder of a corpus. Name is what the user sees in LayoutSlash terms:
// "/"-separated, UTF-8 ("Projects/2024/Q1", "Entwürfe/Alt", "日本語"), or
// "INBOX", or a special-use role ("\\Sent", "\\Drafts", "\\Trash",
// "\\Junk", "\\Archive") that Load maps to the layout's folder of that role
// (see Layout.MailboxName). Names hold no "." (LayoutDotInbox's delimiter)
// and no child of INBOX.
type Folder struct {
	Name       string
	Subscribed bool
}

// Message of a corpus: Body is the whole RFC 5322 message, with CRLF line
// ends; Date is its INTERNALDATE.
type Message struct {
	Folder string
	Flags  []imap.Flag
	Date   time.Time
	Body   []byte
}

// Corpus is a mailbox's content: folders, and messages in the order they
// are appended.
type Corpus struct {
	Folders  []Folder
	Messages []Message
}

// CorpusOptions sizes a corpus built by BuildCorpus.
type CorpusOptions struct {
	Seed int64
	// Messages is the number of small (1–50 KB) messages. The corpus's
	// fixed features take MinMessages of them: a smaller number is raised.
	Messages int
	// LargeMessages is the number of large messages, each with a base64
	// attachment of about LargeSize bytes (1 MiB when 0).
	LargeMessages int
	LargeSize     int
}

// Folders of every corpus, parents before children.
var corpusFolders = []Folder{
	{Name: "INBOX", Subscribed: true},
	{Name: `\Sent`, Subscribed: true},
	{Name: `\Drafts`, Subscribed: true},
	{Name: `\Trash`, Subscribed: true},
	{Name: `\Junk`},
	{Name: `\Archive`, Subscribed: true},
	{Name: "Projects", Subscribed: true},
	{Name: "Projects/2024", Subscribed: true},
	{Name: "Projects/2024/Q1", Subscribed: true},
	{Name: "Projects/2024/Q2"},
	{Name: "Entwürfe", Subscribed: true},
	{Name: "Entwürfe/Alt"},
	{Name: "日本語", Subscribed: true},
	{Name: "Reports & Invoices", Subscribed: true}, // "&" is "&-" in modified UTF-7
	{Name: "Empty"},
}

const (
	keywordLabel1 imap.Flag = "$Label1"
	keywordWork   imap.Flag = "Work"
)

// features are the corpus's fixed messages: every flag and keyword, every
// folder but "Empty", messages without a Message-ID, 8-bit headers, and
// two messages that share a Message-ID but differ. Exact duplicates are
// added by BuildCorpus.
var features = []spec{
	{folder: "INBOX", flags: []imap.Flag{imap.FlagSeen}, sharedID: 1},
	{folder: "INBOX", noID: true},
	{folder: "INBOX", flags: []imap.Flag{imap.FlagAnswered, imap.FlagForwarded}, eightBit: true},
	{folder: "INBOX", flags: []imap.Flag{imap.FlagSeen, imap.FlagAnswered}, sharedID: 1, kind: kindAlternative},
	{folder: `\Sent`, flags: []imap.Flag{imap.FlagSeen}, kind: kindAlternative},
	{folder: `\Sent`, flags: []imap.Flag{imap.FlagSeen, imap.FlagMDNSent}},
	{folder: `\Drafts`, flags: []imap.Flag{imap.FlagDraft, imap.FlagSeen}},
	{folder: `\Drafts`, flags: []imap.Flag{imap.FlagDraft}, noID: true, kind: kindMixed},
	{folder: `\Trash`, flags: []imap.Flag{imap.FlagSeen}},
	{folder: `\Junk`, flags: []imap.Flag{imap.FlagJunk}},
	{folder: `\Archive`, flags: []imap.Flag{imap.FlagSeen, keywordLabel1}},
	{folder: "Projects", flags: []imap.Flag{imap.FlagSeen, keywordWork}},
	{folder: "Projects/2024", flags: []imap.Flag{imap.FlagSeen, imap.FlagFlagged, keywordWork}},
	{folder: "Projects/2024/Q1", flags: []imap.Flag{imap.FlagSeen, keywordWork, imap.FlagForwarded}, kind: kindMixed},
	{folder: "Projects/2024/Q2", flags: []imap.Flag{keywordWork, keywordLabel1}},
	{folder: "Entwürfe", flags: []imap.Flag{imap.FlagDraft}, eightBit: true},
	{folder: "Entwürfe/Alt", flags: []imap.Flag{imap.FlagSeen}, eightBit: true, kind: kindAlternative},
	{folder: "日本語", flags: []imap.Flag{imap.FlagSeen}, eightBit: true},
	{folder: "Reports & Invoices", flags: []imap.Flag{imap.FlagSeen, keywordLabel1}, kind: kindMixed},
}

// duplicates are messages appended twice, byte for byte, to their folder.
var duplicates = []spec{
	{folder: "INBOX", flags: []imap.Flag{imap.FlagSeen, imap.FlagFlagged}},
	{folder: "Projects/2024/Q1", noID: true},
}

// MinMessages is the number of small messages every corpus has.
var MinMessages = len(features) + 2*len(duplicates)

// fillerFolders weighs the folders that the other small messages go to.
var fillerFolders = []struct {
	name   string
	weight int
}{
	{"INBOX", 35}, {`\Sent`, 15}, {`\Archive`, 15}, {"Projects/2024/Q1", 8},
	{"Projects/2024/Q2", 5}, {"Reports & Invoices", 5}, {`\Trash`, 5},
	{"日本語", 4}, {"Entwürfe", 3}, {`\Junk`, 3}, {"Projects", 2},
}

// BuildCorpus builds a mailbox of realistic messages from opts.Seed: the
// same options give a byte-identical corpus. It has INBOX, folders nested
// three deep, non-ASCII folder names, a folder of every special-use role
// and an empty folder; flags \Seen, \Answered, \Flagged, \Draft and
// keywords ($Forwarded, $MDNSent, $Junk, $Label1, Work); INTERNALDATEs
// from 2018 to 2025 in several time zones; messages without a Message-ID,
// two distinct messages sharing one, exact duplicates in one folder, raw
// UTF-8 headers; text/plain, multipart/alternative and multipart/mixed
// messages of 1–50 KB, and opts.LargeMessages large ones.
func BuildCorpus(opts CorpusOptions) Corpus {
	g := newGenerator(opts.Seed)
	c := Corpus{Folders: slices.Clone(corpusFolders)}
	for i, s := range features {
		c.Messages = append(c.Messages, g.message(s, g.featureDate(i)))
	}
	for i, s := range duplicates {
		m := g.message(s, g.featureDate(len(features)+i))
		c.Messages = append(c.Messages, m, m.clone())
	}
	for range opts.Messages - MinMessages {
		c.Messages = append(c.Messages, g.message(g.fillerSpec(), g.date()))
	}
	size := opts.LargeSize
	if size <= 0 {
		size = 1 << 20
	}
	largeFolders := []string{"INBOX", `\Archive`, `\Sent`}
	for i := range opts.LargeMessages {
		s := spec{folder: largeFolders[i%len(largeFolders)], flags: []imap.Flag{imap.FlagSeen}, kind: kindLarge, size: size}
		c.Messages = append(c.Messages, g.message(s, g.date()))
	}
	return c
}

// InFolder returns the messages of folder, in the order they are appended.
func (c Corpus) InFolder(folder string) []Message {
	var list []Message
	for _, m := range c.Messages {
		if m.Folder == folder {
			list = append(list, m)
		}
	}
	return list
}

func (m Message) clone() Message {
	m.Flags = slices.Clone(m.Flags)
	m.Body = slices.Clone(m.Body)
	return m
}

// generator draws everything of a corpus from one seeded source, in a
// fixed order.
type generator struct {
	rng *rand.Rand
	seq int
}

func newGenerator(seed int64) *generator {
	return &generator{rng: rand.New(rand.NewPCG(uint64(seed), 0x6d61696c6d696772))}
}

// zones are the offsets INTERNALDATEs are given in.
var zones = []*time.Location{
	time.UTC,
	time.FixedZone("", -8*3600),
	time.FixedZone("", -5*3600),
	time.FixedZone("", 1*3600),
	time.FixedZone("", 2*3600),
	time.FixedZone("", 5*3600+1800),
	time.FixedZone("", 9*3600),
	time.FixedZone("", -(3*3600 + 1800)),
	time.FixedZone("", 5*3600+2700),
}

var (
	firstDate = time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)
	lastDate  = time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
)

// date returns a time to the second between firstDate and lastDate, in one
// of zones.
func (g *generator) date() time.Time {
	span := lastDate.Unix() - firstDate.Unix()
	t := time.Unix(firstDate.Unix()+g.rng.Int64N(span), 0)
	return t.In(zones[g.rng.IntN(len(zones))])
}

// featureDate spreads the fixed messages over the years and zones, so that
// every corpus has them whatever its seed.
func (g *generator) featureDate(i int) time.Time {
	year := firstDate.Year() + i%(lastDate.Year()-firstDate.Year()+1)
	t := time.Date(year, time.Month(1+g.rng.IntN(12)), 1+g.rng.IntN(28),
		g.rng.IntN(24), g.rng.IntN(60), g.rng.IntN(60), 0, time.UTC)
	return t.In(zones[i%len(zones)])
}

func (g *generator) fillerSpec() spec {
	s := spec{folder: g.fillerFolder(), noID: g.chance(5), eightBit: g.chance(10)}
	switch r := g.rng.IntN(100); {
	case r < 60:
		s.kind = kindPlain
	case r < 85:
		s.kind = kindAlternative
	default:
		s.kind = kindMixed
	}
	s.flags = g.fillerFlags(s.folder)
	return s
}

func (g *generator) fillerFolder() string {
	total := 0
	for _, f := range fillerFolders {
		total += f.weight
	}
	r := g.rng.IntN(total)
	for _, f := range fillerFolders {
		if r < f.weight {
			return f.name
		}
		r -= f.weight
	}
	panic("unreachable")
}

func (g *generator) fillerFlags(folder string) []imap.Flag {
	var flags []imap.Flag
	add := func(percent int, f imap.Flag) {
		if g.chance(percent) {
			flags = append(flags, f)
		}
	}
	seen := 70
	if folder == `\Sent` || folder == `\Archive` {
		seen = 100
	}
	add(seen, imap.FlagSeen)
	add(15, imap.FlagAnswered)
	add(10, imap.FlagFlagged)
	add(5, imap.FlagForwarded)
	add(5, keywordLabel1)
	add(10, keywordWork)
	return flags
}

// chance is true with the given probability in percent.
func (g *generator) chance(percent int) bool {
	return g.rng.IntN(100) < percent
}
