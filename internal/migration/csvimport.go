package migration

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxImportRows caps the accounts of one imported file.
const MaxImportRows = 100_000

// ImportRow is one account of an imported file and the line it starts on.
type ImportRow struct {
	Line    int
	Account AccountInput
}

// ImportFile is a parsed accounts file: its good rows and, for every bad
// one, the line and the reason.
type ImportFile struct {
	Rows     []ImportRow
	Problems []LineError
}

// The columns of an accounts file, in their order without a header; a
// side that logs in with refresh tokens names its secret column
// *_refresh_token (secretAliases), which a header may use for either.
var importColumns = []string{"source_login", "source_password", "destination_login", "destination_password"}

// secretAliases are the other names of the secret columns.
var secretAliases = map[string]string{"source_refresh_token": "source_password", "destination_refresh_token": "destination_password"}

// ParseAccountsCSV reads an accounts file: columns source_login,
// source_password[,destination_login,destination_password], separated by
// ',' or ';' (whichever comes first outside quotes), RFC
// 4180 quoting, an optional header row naming the columns in any order, a
// UTF-8 byte-order mark and blank lines ignored. Every bad row is listed.
// The secret columns may be named *_refresh_token instead. A side that
// needs no password (a master login, an application's token, a refresh
// token to come from a device authorization) may leave it out, the
// column too.
func ParseAccountsCSV(data []byte, needs SecretNeeds) ImportFile {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = detectDelimiter(data)
	r.FieldsPerRecord = -1
	p := importParser{seen: map[string]int{}, delimiter: string(r.Comma), needs: needs}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			p.syntaxError(err)
			break
		}
		line, _ := r.FieldPos(0)
		p.record(line, record)
		if p.badHeader {
			break // every row would be wrong; the header's problems say why
		}
		if p.records > MaxImportRows {
			p.bad(line, fmt.Sprintf("more than %d accounts in one file; split it", MaxImportRows))
			break
		}
	}
	return ImportFile{Rows: p.rows, Problems: p.problems}
}

// detectDelimiter returns whichever of ',' and ';' comes first outside
// quotes; ',' when neither does.
func detectDelimiter(data []byte) rune {
	quoted := false
	for _, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ',' || c == ';':
			return rune(c)
		}
	}
	return ','
}

type importParser struct {
	delimiter string
	needs     SecretNeeds
	columns   []string // from the header, or nil for positional columns
	rows      []ImportRow
	problems  []LineError
	seen      map[string]int // source login → line of first use
	started   bool           // a non-blank record has been read
	badHeader bool
	records   int // account rows read, good or bad: the cap counts both
}

func (p *importParser) bad(line int, reason string) {
	p.problems = append(p.problems, LineError{Line: line, Reason: reason})
}

func (p *importParser) syntaxError(err error) {
	var parseErr *csv.ParseError
	if errors.As(err, &parseErr) {
		p.bad(parseErr.StartLine, parseErr.Err.Error()+" (the rest of the file was not read)")
		return
	}
	p.bad(0, err.Error())
}

func (p *importParser) record(line int, record []string) {
	if isBlank(record) {
		return
	}
	first := !p.started
	p.started = true
	if first && isHeader(record) {
		p.header(line, record)
		return
	}
	p.records++
	in, reason := p.account(record)
	if reason == "" {
		if err := in.normalizeNew(p.needs); err != nil {
			reason = err.Error()
		}
	}
	if reason == "" {
		if earlier, dup := p.seen[in.SourceLogin]; dup {
			reason = fmt.Sprintf("source_login %q repeats line %d", in.SourceLogin, earlier)
		} else {
			p.seen[in.SourceLogin] = line
		}
	}
	if reason != "" {
		p.bad(line, reason)
		return
	}
	p.rows = append(p.rows, ImportRow{Line: line, Account: in})
}

// account maps a record's fields to an account by the header's columns, or
// by position without a header.
func (p *importParser) account(record []string) (AccountInput, string) {
	columns := p.columns
	if columns == nil {
		if len(record) < p.requiredColumns() || len(record) > len(importColumns) {
			required, names := p.requiredColumns(), p.positionalNames()
			return AccountInput{}, fmt.Sprintf("want %d to 4 fields (%s), got %d", required,
				strings.Join(names[:required], p.delimiter)+"["+p.delimiter+strings.Join(names[required:], p.delimiter)+"]", len(record))
		}
		columns = importColumns[:len(record)]
	} else if len(record) > len(columns) {
		return AccountInput{}, fmt.Sprintf("want at most %d fields as in the header, got %d", len(columns), len(record))
	}
	// A short row leaves the header's last columns empty: spreadsheets
	// drop trailing empty cells, and the destination columns are optional.
	columns = columns[:len(record)]
	var in AccountInput
	for i, column := range columns {
		switch column {
		case "source_login":
			in.SourceLogin = record[i]
		case "source_password":
			in.SourcePassword = Password(record[i])
		case "destination_login":
			in.DestinationLogin = record[i]
		case "destination_password":
			in.DestinationPassword = Password(record[i])
		}
	}
	return in, ""
}

func (p *importParser) header(line int, record []string) {
	problems := len(p.problems)
	defer func() { p.badHeader = len(p.problems) > problems }()
	have := map[string]string{} // column → the name the header gave it
	for _, field := range record {
		name := strings.ToLower(strings.TrimSpace(field))
		column := name
		if alias, ok := secretAliases[name]; ok {
			column = alias
		}
		switch {
		case !isImportColumn(column):
			p.bad(line, fmt.Sprintf("unknown column %.40q in the header; known: %s, %s, %s", field, strings.Join(importColumns, ", "),
				"source_refresh_token", "destination_refresh_token"))
		case have[column] == name:
			p.bad(line, fmt.Sprintf("column %q twice in the header", name))
		case have[column] != "":
			p.bad(line, fmt.Sprintf("columns %q and %q both hold one side's secret: keep one", have[column], name))
		}
		have[column] = name
		p.columns = append(p.columns, column)
	}
	names := p.positionalNames()
	for i, required := range importColumns[:p.requiredColumns()] {
		if have[required] == "" {
			p.bad(line, fmt.Sprintf("the header has no %s column", names[i]))
		}
	}
}

// requiredColumns is how many of importColumns every file has: the login,
// and the source's password where it takes one (a refresh token may come
// later, from a device authorization).
func (p *importParser) requiredColumns() int {
	if p.needs.Source == SecretPassword {
		return 2
	}
	return 1
}

// positionalNames are the columns of a file without a header, named for
// the secrets the task's sides take.
func (p *importParser) positionalNames() []string {
	return []string{"source_login", secretField("source", cmp.Or(p.needs.Source, SecretPassword)),
		"destination_login", secretField("destination", cmp.Or(p.needs.Destination, SecretPassword))}
}

func isHeader(record []string) bool {
	for _, field := range record {
		if strings.EqualFold(strings.TrimSpace(field), "source_login") {
			return true
		}
	}
	return false
}

func isImportColumn(name string) bool {
	for _, c := range importColumns {
		if name == c {
			return true
		}
	}
	return false
}

func isBlank(record []string) bool {
	for _, field := range record {
		if strings.TrimSpace(field) != "" {
			return false
		}
	}
	return true
}
