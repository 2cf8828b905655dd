package imaptest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
)

type kind int

const (
	kindPlain       kind = iota // text/plain
	kindAlternative             // multipart/alternative: text and HTML
	kindMixed                   // multipart/mixed: text and a small attachment
	kindLarge                   // multipart/mixed: text and a large attachment
)

// spec describes a message to generate.
type spec struct {
	folder   string
	flags    []imap.Flag
	kind     kind
	noID     bool // no Message-ID header
	eightBit bool // raw UTF-8 in From, Subject and text
	sharedID int  // messages with the same non-zero sharedID share a Message-ID
	size     int  // kindLarge: bytes of the encoded attachment
}

const (
	minSmall = 1200      // bytes of a small message, at least
	maxSmall = 48 * 1024 // bytes of a small message, about at most
)

var (
	people = []string{
		"Alice Example <alice@example.com>", "Bob Builder <bob@example.org>",
		"Carol Jones <carol.jones@example.net>", "Dave Smith <dave@mail.example.com>",
		"Erin Lee <erin.lee@example.org>", "Frank Miller <frank@example.net>",
	}
	peopleUTF8 = []string{
		"Jürgen Müller <juergen.mueller@example.de>", "Zoë Ångström <zoe@example.se>",
		"山田太郎 <yamada@example.jp>", "François Gérard <francois@example.fr>",
	}
	words = strings.Fields(`the project meeting report invoice quarter budget review
		please find attached draft agenda notes schedule update team customer release
		deadline next week monday friday thanks regards call office plan status issue
		server migration account mailbox folder message archive contract offer price
		summary proposal design feedback question answer approved pending delivery`)
	wordsUTF8 = strings.Fields(`Grüße Besprechung Überblick Entwürfe Straße Käse
		café résumé naïve façade smörgåsbord 日本語 会議 資料 東京 ありがとう Ünïcödé`)
)

// message generates the message s describes, with INTERNALDATE date.
func (g *generator) message(s spec, date time.Time) Message {
	g.seq++
	var b bytes.Buffer
	g.header(&b, s, date)
	switch s.kind {
	case kindPlain:
		b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
		b.WriteString("Content-Transfer-Encoding: " + g.cte(s) + "\r\n\r\n")
		b.WriteString(g.text(s, g.smallSize()-b.Len()))
	case kindAlternative:
		g.alternative(&b, s)
	case kindMixed, kindLarge:
		g.mixed(&b, s)
	}
	return Message{Folder: s.folder, Flags: slices.Clone(s.flags), Date: date, Body: b.Bytes()}
}

func (g *generator) header(b *bytes.Buffer, s spec, date time.Time) {
	from, to := g.pick(people), people[0]
	if s.eightBit {
		from = g.pick(peopleUTF8)
	}
	if s.folder == `\Sent` || s.folder == `\Drafts` || s.folder == "Entwürfe" {
		from, to = to, from
	}
	sent := date.Add(-time.Duration(g.rng.IntN(600)) * time.Second)
	fmt.Fprintf(b, "Date: %s\r\n", sent.Format(time.RFC1123Z))
	fmt.Fprintf(b, "From: %s\r\nTo: %s\r\n", from, to)
	fmt.Fprintf(b, "Subject: %s\r\n", g.subject(s))
	if !s.noID {
		fmt.Fprintf(b, "Message-ID: %s\r\n", g.messageID(s))
	}
	b.WriteString("MIME-Version: 1.0\r\n")
}

func (g *generator) subject(s spec) string {
	if s.eightBit {
		return "Grüße aus Köln – " + g.sentence(s, 3+g.rng.IntN(4))
	}
	if g.chance(10) {
		return "=?UTF-8?Q?Gr=C3=BC=C3=9Fe?= " + g.sentence(s, 3)
	}
	return g.sentence(s, 3+g.rng.IntN(6))
}

func (g *generator) messageID(s spec) string {
	if s.sharedID != 0 {
		return fmt.Sprintf("<shared-%d@example.com>", s.sharedID)
	}
	return fmt.Sprintf("<%d.%016x@mail.example.com>", g.seq, g.rng.Uint64())
}

func (g *generator) cte(s spec) string {
	if s.eightBit {
		return "8bit"
	}
	return "7bit"
}

// smallSize draws the size of a small message, log-uniform so that most
// are a few KB.
func (g *generator) smallSize() int {
	return int(minSmall * math.Exp(g.rng.Float64()*math.Log(maxSmall/minSmall)))
}

func (g *generator) alternative(b *bytes.Buffer, s spec) {
	boundary := g.boundary()
	fmt.Fprintf(b, "Content-Type: multipart/alternative; boundary=%q\r\n\r\n", boundary)
	b.WriteString("This is a multi-part message in MIME format.\r\n")
	budget := g.smallSize() - b.Len()
	text := g.text(s, budget*2/5)
	fmt.Fprintf(b, "--%s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: %s\r\n\r\n%s",
		boundary, g.cte(s), text)
	fmt.Fprintf(b, "--%s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: %s\r\n\r\n%s",
		boundary, g.cte(s), g.html(s, budget-len(text)))
	fmt.Fprintf(b, "--%s--\r\n", boundary)
}

func (g *generator) mixed(b *bytes.Buffer, s spec) {
	boundary := g.boundary()
	fmt.Fprintf(b, "Content-Type: multipart/mixed; boundary=%q\r\n\r\n", boundary)
	b.WriteString("This is a multi-part message in MIME format.\r\n")
	var text string
	encoded := s.size
	if s.kind == kindMixed {
		remaining := g.smallSize() - b.Len() - 300 // part headers
		text = g.text(s, max(200, remaining/5))
		encoded = remaining - len(text)
	} else {
		text = g.text(s, 600)
	}
	fmt.Fprintf(b, "--%s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: %s\r\n\r\n%s",
		boundary, g.cte(s), text)
	name, typ := fmt.Sprintf("scan-%04d.pdf", g.seq), "application/pdf"
	if s.kind == kindLarge {
		name, typ = fmt.Sprintf("backup-%04d.bin", g.seq), "application/octet-stream"
	}
	fmt.Fprintf(b, "--%s\r\nContent-Type: %s; name=%q\r\nContent-Disposition: attachment; filename=%q\r\n"+
		"Content-Transfer-Encoding: base64\r\n\r\n", boundary, typ, name, name)
	g.base64(b, max(0, encoded))
	fmt.Fprintf(b, "--%s--\r\n", boundary)
}

func (g *generator) boundary() string {
	return fmt.Sprintf("=_mm_%016x", g.rng.Uint64())
}

// text returns paragraphs of about n bytes, lines of at most 76 bytes.
func (g *generator) text(s spec, n int) string {
	var b strings.Builder
	if s.eightBit {
		b.WriteString("Liebe Grüße aus Köln – 日本語のテキスト.\r\n\r\n")
	}
	for b.Len() < n {
		g.paragraph(&b, s, "", "")
	}
	return b.String()
}

// html returns a document of about n bytes.
func (g *generator) html(s spec, n int) string {
	var b strings.Builder
	b.WriteString("<html><body>\r\n")
	for b.Len() < n {
		g.paragraph(&b, s, "<p>", "</p>")
	}
	b.WriteString("</body></html>\r\n")
	return b.String()
}

func (g *generator) paragraph(b *strings.Builder, s spec, open, end string) {
	line := open
	for range 20 + g.rng.IntN(60) {
		w := g.word(s)
		if len(line)+1+len(w) > 76 {
			b.WriteString(line + "\r\n")
			line = ""
		}
		if line != "" && line != open {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "." + end + "\r\n\r\n")
}

func (g *generator) sentence(s spec, n int) string {
	first := g.pick(words)
	parts := []string{strings.ToUpper(first[:1]) + first[1:]}
	for range n - 1 {
		parts = append(parts, g.word(s))
	}
	return strings.Join(parts, " ")
}

func (g *generator) word(s spec) string {
	if s.eightBit && g.chance(25) {
		return g.pick(wordsUTF8)
	}
	return g.pick(words)
}

func (g *generator) pick(list []string) string {
	return list[g.rng.IntN(len(list))]
}

// base64 writes about n bytes of base64 in lines of 76 characters: random,
// incompressible content, as of a PDF or an archive.
func (g *generator) base64(b *bytes.Buffer, n int) {
	raw := make([]byte, n*57/78)
	for i := 0; i < len(raw); i += 8 {
		v := g.rng.Uint64()
		for j := i; j < min(i+8, len(raw)); j++ {
			raw[j] = byte(v)
			v >>= 8
		}
	}
	b.Grow(n + 80)
	line := make([]byte, 76)
	for len(raw) > 0 {
		chunk := raw[:min(57, len(raw))]
		raw = raw[len(chunk):]
		base64.StdEncoding.Encode(line, chunk)
		b.Write(line[:base64.StdEncoding.EncodedLen(len(chunk))])
		b.WriteString("\r\n")
	}
}
