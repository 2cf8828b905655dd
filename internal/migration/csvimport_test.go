package migration

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// csvRow is an ImportRow with its passwords as plain strings, so that a
// mismatch prints what was parsed.
type csvRow struct {
	Line                           int
	SourceLogin, SourcePassword    string
	DestinationLogin, DestPassword string
}

// effectiveDestinationPassword is the password the destination login
// will use: the source's when linked to it.
func effectiveDestinationPassword(in AccountInput) Password {
	if in.DestinationPasswordSameAsSource {
		return in.SourcePassword
	}
	return in.DestinationPassword
}

func csvRows(f ImportFile) []csvRow {
	var rows []csvRow
	for _, r := range f.Rows {
		rows = append(rows, csvRow{
			r.Line, r.Account.SourceLogin, string(r.Account.SourcePassword),
			r.Account.DestinationLogin, string(effectiveDestinationPassword(r.Account)),
		})
	}
	return rows
}

// The messages the parser and normalize give; see csvimport.go and account.go.
const (
	wantCommaFields = "want 2 to 4 fields (source_login,source_password[,destination_login,destination_password]), got "
	wantSemiFields  = "want 2 to 4 fields (source_login;source_password[;destination_login;destination_password]), got "
	badLogin        = " must be UTF-8 without control characters, at most 1024 bytes"
	badPassword     = " must be at most 1024 bytes, without NUL, CR or LF"
	notRead         = " (the rest of the file was not read)"
	knownColumns    = "known: source_login, source_password, destination_login, destination_password, source_refresh_token, destination_refresh_token"
)

// goodCSVFiles parse without a problem; they also seed FuzzParseAccountsCSV.
var goodCSVFiles = []struct {
	name string
	in   string
	want []csvRow
}{
	{"comma, 2 columns", "alice@old.example,s3cret\nbob@old.example,hunter2\n", []csvRow{
		{1, "alice@old.example", "s3cret", "alice@old.example", "s3cret"},
		{2, "bob@old.example", "hunter2", "bob@old.example", "hunter2"},
	}},
	{"semicolon, 4 columns, no final newline", "alice;pw1;alice@new.example;pw2\nbob;pw3;bob@new.example;pw4", []csvRow{
		{1, "alice", "pw1", "alice@new.example", "pw2"},
		{2, "bob", "pw3", "bob@new.example", "pw4"},
	}},
	{"semicolon first, comma in a password", "alice;pa,ss\nbob;x,y,z\n", []csvRow{
		{1, "alice", "pa,ss", "alice", "pa,ss"},
		{2, "bob", "x,y,z", "bob", "x,y,z"},
	}},
	{"comma first, semicolon in a password", "alice,pa;ss\n", []csvRow{
		{1, "alice", "pa;ss", "alice", "pa;ss"},
	}},
	{"quoted delimiters", "\"smith, john\",\"p,w;x\"\n\"a;b\",pw\n", []csvRow{
		{1, "smith, john", "p,w;x", "smith, john", "p,w;x"},
		{2, "a;b", "pw", "a;b", "pw"},
	}},
	{"quoted delimiter before the first bare one", "\"a,b\";pw\n", []csvRow{
		{1, "a,b", "pw", "a,b", "pw"},
	}},
	{"doubled quotes", "\"o\"\"brien\",\"say \"\"hi\"\"\"\n\"\"\"\",\"\"\"\"\"\"\n", []csvRow{
		{1, `o"brien`, `say "hi"`, `o"brien`, `say "hi"`},
		{2, `"`, `""`, `"`, `""`},
	}},
	{"header in another order", "destination_password,source_login,destination_login,source_password\npw2,alice,alice@new,pw1\n", []csvRow{
		{2, "alice", "pw1", "alice@new", "pw2"},
	}},
	{"header with the two required columns, any case and spacing", "Source_Password ; SOURCE_LOGIN\npw;alice\n", []csvRow{
		{2, "alice", "pw", "alice", "pw"},
	}},
	{"quoted header", "\"source_login\",\"source_password\",\"destination_login\"\nalice,pw,bob\n", []csvRow{
		{2, "alice", "pw", "bob", "pw"},
	}},
	{"short rows under a header: spreadsheets drop trailing empty cells",
		"source_login,source_password,destination_login,destination_password\nalice,pw\nbob,pw,bob@new\ncarol,pw,,\n", []csvRow{
			{2, "alice", "pw", "alice", "pw"},
			{3, "bob", "pw", "bob@new", "pw"},
			{4, "carol", "pw", "carol", "pw"},
		}},
	{"BOM and header", "\ufeffsource_login,source_password\nalice,pw\n", []csvRow{
		{2, "alice", "pw", "alice", "pw"},
	}},
	{"BOM without header", "\ufeffalice;pw\n", []csvRow{
		{1, "alice", "pw", "alice", "pw"},
	}},
	{"blank and whitespace-only lines", "\n\nalice,pw\n   \n\t\n , \nbob,pw\n\n", []csvRow{
		{3, "alice", "pw", "alice", "pw"},
		{7, "bob", "pw", "bob", "pw"},
	}},
	{"blank lines before the header", "\n \nsource_login,source_password\nalice,pw\n", []csvRow{
		{4, "alice", "pw", "alice", "pw"},
	}},
	{"CRLF", "source_login,source_password\r\nalice,pw\r\n\r\nbob,pw2\r\n", []csvRow{
		{2, "alice", "pw", "alice", "pw"},
		{4, "bob", "pw2", "bob", "pw2"},
	}},
	{"3 columns: destination password defaults", "alice,pw,alice@new.example\n", []csvRow{
		{1, "alice", "pw", "alice@new.example", "pw"},
	}},
	{"4 columns, empty destination login", "alice,pw,,pw2\n", []csvRow{
		{1, "alice", "pw", "alice", "pw2"},
	}},
	{"2, 3 and 4 columns in one file", "a,1\nb,2,B\nc,3,C,33\n", []csvRow{
		{1, "a", "1", "a", "1"},
		{2, "b", "2", "B", "2"},
		{3, "c", "3", "C", "33"},
	}},
	{"logins trimmed, passwords kept", "  alice  , pw ,\tbob\t,\tpw2 \n", []csvRow{
		{1, "alice", " pw ", "bob", "\tpw2 "},
	}},
	{"non-ASCII logins", "jürgen@beispiel.de,päss\n", []csvRow{
		{1, "jürgen@beispiel.de", "päss", "jürgen@beispiel.de", "päss"},
	}},
	{"logins differing in case are two accounts", "Alice,pw\nalice,pw\n", []csvRow{
		{1, "Alice", "pw", "Alice", "pw"},
		{2, "alice", "pw", "alice", "pw"},
	}},
	{"empty file", "", nil},
	{"only blank lines", "\n\r\n  \n", nil},
	{"only a header", "source_login,source_password\n", nil},
}

func TestParseAccountsCSVGoodFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range goodCSVFiles {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := ParseAccountsCSV([]byte(tc.in), EveryPassword)
			if len(f.Problems) > 0 {
				t.Errorf("problems %+v, want none", f.Problems)
			}
			if got := csvRows(f); !slices.Equal(got, tc.want) {
				t.Errorf("rows\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// badCSVFiles have problems; they also seed FuzzParseAccountsCSV.
var badCSVFiles = []struct {
	name     string
	in       string
	wantRows []csvRow
	want     []LineError
}{
	{"no password field", "alice\n", nil, []LineError{{1, wantCommaFields + "1"}}},
	{"empty password", "alice,\n", nil, []LineError{{1, "source_password must not be empty"}}},
	{"empty password and login", ",\"\",bob\n", nil, []LineError{{1, "source_password must not be empty"}}},
	{"empty login", ",pw\n", nil, []LineError{{1, "source_login must not be empty"}}},
	{"blank login", "   ;pw\n", nil, []LineError{{1, "source_login must not be empty"}}},
	{"too many fields, comma", "ok,pw\na,b,c,d,e\n", []csvRow{{1, "ok", "pw", "ok", "pw"}},
		[]LineError{{2, wantCommaFields + "5"}}},
	{"too many fields, semicolon", "a;b;c;d;e\nok;pw\n", []csvRow{{2, "ok", "pw", "ok", "pw"}},
		[]LineError{{1, wantSemiFields + "5"}}},
	{"too few fields, semicolon", "ok;pw\nalone\n", []csvRow{{1, "ok", "pw", "ok", "pw"}},
		[]LineError{{2, wantSemiFields + "1"}}},
	{"fields unlike the header", "source_login,source_password\nalice,pw,bob\n", nil,
		[]LineError{{2, "want at most 2 fields as in the header, got 3"}}},
	{"short row under a header missing the login", "source_password;source_login\npw\n", nil,
		[]LineError{{2, "source_login must not be empty"}}},
	{"duplicate login", "alice,pw\nbob,pw\n alice ,other\n", []csvRow{
		{1, "alice", "pw", "alice", "pw"},
		{2, "bob", "pw", "bob", "pw"},
	}, []LineError{{3, `source_login "alice" repeats line 1`}}},
	{"duplicate of a bad row is not a duplicate", "alice,\nalice,pw\n", []csvRow{{2, "alice", "pw", "alice", "pw"}},
		[]LineError{{1, "source_password must not be empty"}}},
	// A bad header stops the parse: every row would be wrong in its wake.
	{"unknown header column", "source_login,source_password,Note\nalice,pw,x\n", nil,
		[]LineError{{1, `unknown column "Note" in the header; ` + knownColumns}}},
	{"column twice in the header", "source_login,source_password,Source_Login\n", nil,
		[]LineError{{1, `column "source_login" twice in the header`}}},
	{"header without source_password", "source_login,destination_login\nalice,bob\n", nil, []LineError{
		{1, "the header has no source_password column"},
	}},
	{"unterminated quote", "alice,pw\nbob,\"unterminated\ncarol,pw\n", []csvRow{{1, "alice", "pw", "alice", "pw"}},
		[]LineError{{2, `extraneous or missing " in quoted-field` + notRead}}},
	{"text after a closing quote", "alice,pw\n\"bob\"x,pw\ncarol,pw\n", []csvRow{{1, "alice", "pw", "alice", "pw"}},
		[]LineError{{2, `extraneous or missing " in quoted-field` + notRead}}},
	{"bare quote", "alice,pw\nbob,p\"w\ncarol,pw\n", []csvRow{{1, "alice", "pw", "alice", "pw"}},
		[]LineError{{2, `bare " in non-quoted-field` + notRead}}},
	{"control character in the login", "al\x01ice,pw\n", nil, []LineError{{1, "source_login" + badLogin}}},
	{"tab inside the login", "al\tice,pw\n", nil, []LineError{{1, "source_login" + badLogin}}},
	{"DEL in the destination login", "alice,pw,bo\x7fb\n", nil, []LineError{{1, "destination_login" + badLogin}}},
	{"login not UTF-8", "\xffalice,pw\n", nil, []LineError{{1, "source_login" + badLogin}}},
	{"login too long", strings.Repeat("l", MaxLoginBytes+1) + ",pw\n", nil, []LineError{{1, "source_login" + badLogin}}},
	{"CR in a quoted password", "alice,\"pa\rss\"\nbob,pw\n", []csvRow{{2, "bob", "pw", "bob", "pw"}},
		[]LineError{{1, "source_password" + badPassword}}},
	{"NUL in a password", "alice,pa\x00ss\n", nil, []LineError{{1, "source_password" + badPassword}}},
	{"LF in a quoted destination password", "alice,pw,,\"a\nb\"\nbob,pw\n", []csvRow{{3, "bob", "pw", "bob", "pw"}},
		[]LineError{{1, "destination_password" + badPassword}}},
	{"password too long", "alice," + strings.Repeat("p", MaxPasswordBytes+1) + "\n", nil,
		[]LineError{{1, "source_password" + badPassword}}},
	{"multi-line fields keep the lines of later rows", "alice,\"multi\nline\"\r\nbob,pw\n\"car\nol\",\"p\r\nw\"\n\ndave,\"pw\"\n", []csvRow{
		{3, "bob", "pw", "bob", "pw"},
		{8, "dave", "pw", "dave", "pw"},
	}, []LineError{
		{1, "source_password" + badPassword},
		{4, "source_login" + badLogin},
	}},
	{"header below the first row is a row", "alice,pw\nsource_login,source_password\n", []csvRow{
		{1, "alice", "pw", "alice", "pw"},
		{2, "source_login", "source_password", "source_login", "source_password"},
	}, nil},
}

func TestParseAccountsCSVBadFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range badCSVFiles {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := ParseAccountsCSV([]byte(tc.in), EveryPassword)
			if !slices.Equal(f.Problems, tc.want) {
				t.Errorf("problems\n got %+v\nwant %+v", f.Problems, tc.want)
			}
			if got := csvRows(f); !slices.Equal(got, tc.wantRows) {
				t.Errorf("rows\n got %+v\nwant %+v", got, tc.wantRows)
			}
		})
	}
}

// TestParseAccountsCSVForAMasterLogin: with a master login on the source
// a file may list logins alone, positionally or under a header, while a
// destination that needs passwords still gets one per row.
func TestParseAccountsCSVForAMasterLogin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		needs    SecretNeeds
		in       string
		want     []csvRow
		problems []LineError
	}{
		{"logins alone", SecretNeeds{}, "alice\nbob\n", []csvRow{{1, "alice", "", "alice", ""}, {2, "bob", "", "bob", ""}}, nil},
		{"header without passwords", SecretNeeds{}, "destination_login,source_login\nann@new,ann\n", []csvRow{{2, "ann", "", "ann@new", ""}}, nil},
		{"passwords given are kept", SecretNeeds{}, "alice,pw\n", []csvRow{{1, "alice", "pw", "alice", "pw"}}, nil},
		{"destination password per row", SecretNeeds{Destination: SecretPassword}, "source_login,destination_password\nalice,pw2\nbob,\n", []csvRow{{2, "alice", "", "alice", "pw2"}},
			[]LineError{{3, "destination_password must not be empty: the source logs in without one, so there is none to share"}}},
		{"a password source still needs the column", EveryPassword, "source_login\nalice\n", nil,
			[]LineError{{1, "the header has no source_password column"}}},
		{"a password source still needs two fields", EveryPassword, "alice\n", nil,
			[]LineError{{1, "want 2 to 4 fields (source_login,source_password[,destination_login,destination_password]), got 1"}}},
		{"refresh tokens by their names", SecretNeeds{SecretRefreshToken, NoSecret}, "source_login,source_refresh_token\nann,rt-1\n", []csvRow{{2, "ann", "rt-1", "ann", "rt-1"}}, nil},
		{"refresh tokens to come later", SecretNeeds{SecretRefreshToken, NoSecret}, "ann\n", []csvRow{{1, "ann", "", "ann", ""}}, nil},
		{"too many fields for refresh tokens", SecretNeeds{SecretRefreshToken, NoSecret}, "a,b,c,d,e\n", nil,
			[]LineError{{1, "want 1 to 4 fields (source_login[,source_refresh_token,destination_login,destination_password]), got 5"}}},
		{"both names of one secret", EveryPassword, "source_login,source_password,source_refresh_token\nann,a,b\n", nil,
			[]LineError{{1, `columns "source_password" and "source_refresh_token" both hold one side's secret: keep one`}}},
		{"too many fields", SecretNeeds{}, "a,b,c,d,e\n", nil,
			[]LineError{{1, "want 1 to 4 fields (source_login[,source_password,destination_login,destination_password]), got 5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := ParseAccountsCSV([]byte(tc.in), tc.needs)
			if !slices.Equal(f.Problems, tc.problems) {
				t.Errorf("problems\n got %+v\nwant %+v", f.Problems, tc.problems)
			}
			if got := csvRows(f); !slices.Equal(got, tc.want) {
				t.Errorf("rows\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseAccountsCSVOneBadRowAmongThousands(t *testing.T) {
	t.Parallel()
	const good, badAt = 5000, 3217 // badAt: the index of the bad row among all
	var b bytes.Buffer
	b.WriteString("source_login;source_password\n")
	for i := range good + 1 {
		if i == badAt {
			fmt.Fprintf(&b, "bad%d;\n", i) // no password
			continue
		}
		fmt.Fprintf(&b, "user%d@old.example;pw%d\n", i, i)
	}
	f := ParseAccountsCSV(b.Bytes(), EveryPassword)
	badLine := badAt + 2 // after the header, lines count from 1
	want := []LineError{{badLine, "source_password must not be empty"}}
	if !slices.Equal(f.Problems, want) {
		t.Fatalf("problems %+v, want %+v", f.Problems, want)
	}
	if len(f.Rows) != good {
		t.Fatalf("%d rows, want %d", len(f.Rows), good)
	}
	for i, row := range f.Rows {
		n := i
		if i >= badAt {
			n++
		}
		if row.Line != n+2 || row.Account.SourceLogin != fmt.Sprintf("user%d@old.example", n) {
			t.Fatalf("row %d: line %d login %q, want line %d user%d@old.example", i, row.Line, row.Account.SourceLogin, n+2, n)
		}
	}
}

func TestParseAccountsCSVRowCap(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	b.WriteString("source_login,source_password\n\n") // header and a blank line count no rows
	var atCap int                                     // the length of a file of exactly MaxImportRows rows
	for i := range MaxImportRows + 1 {
		if i == MaxImportRows {
			atCap = b.Len()
		}
		b.WriteString("u")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(",p\n")
	}

	f := ParseAccountsCSV(b.Bytes()[:atCap], EveryPassword)
	if len(f.Problems) > 0 || len(f.Rows) != MaxImportRows {
		t.Fatalf("%d rows: %d rows, problems %+v; want all rows, no problem", MaxImportRows, len(f.Rows), f.Problems)
	}

	f = ParseAccountsCSV(b.Bytes(), EveryPassword)
	want := []LineError{{MaxImportRows + 3, "more than 100000 accounts in one file; split it"}}
	if !slices.Equal(f.Problems, want) {
		t.Fatalf("%d rows: problems %+v, want %+v", MaxImportRows+1, f.Problems, want)
	}
}

// TestParseAccountsCSVCapsBadRows: bad rows count toward MaxImportRows too.
// Counting only good ones, a 32 MiB upload (the HTTP limit) of "x\n" lines
// makes 16.7 million problems: 2.8 GiB of heap and 30 s of CPU.
func TestParseAccountsCSVCapsBadRows(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("x\n"), MaxImportRows+1000)
	f := ParseAccountsCSV(data, EveryPassword)
	if len(f.Problems) > MaxImportRows+2 { // the bad rows up to the cap, one more, and the cap
		t.Fatalf("%d problems for a file of %d bad rows; want the file cut after %d rows",
			len(f.Problems), MaxImportRows+1000, MaxImportRows)
	}
	want := LineError{MaxImportRows + 1, "more than 100000 accounts in one file; split it"}
	if last := f.Problems[len(f.Problems)-1]; last != want {
		t.Errorf("last problem %+v, want %+v", last, want)
	}
}

func TestImportErrorText(t *testing.T) {
	t.Parallel()
	lines := func(n int) []LineError {
		var l []LineError
		for i := range n {
			l = append(l, LineError{Line: i + 2, Reason: fmt.Sprintf("reason %d", i)})
		}
		return l
	}
	listed := func(n int) string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("line %d: reason %d", i+2, i))
		}
		return strings.Join(s, "\n")
	}
	for _, tc := range []struct {
		lines int
		want  string
	}{
		{0, ""},
		{1, "line 2: reason 0"},
		{2, "line 2: reason 0\nline 3: reason 1"},
		{100, listed(100)},
		{101, listed(100) + "\nand 1 more bad line"},
		{250, listed(100) + "\nand 150 more bad lines"},
	} {
		if got := (&ImportError{Lines: lines(tc.lines)}).Error(); got != tc.want {
			t.Errorf("%d lines:\n got %q\nwant %q", tc.lines, got, tc.want)
		}
	}
}

func FuzzParseAccountsCSV(f *testing.F) {
	for _, tc := range goodCSVFiles {
		f.Add([]byte(tc.in))
	}
	for _, tc := range badCSVFiles {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := ParseAccountsCSV(data, EveryPassword)
		checkImportFile(t, data, file)
		checkRoundTrip(t, file)
	})
}

// checkRoundTrip writes the good rows of file out as encoding/csv does, with
// a header, and checks that they parse back the same.
func checkRoundTrip(t *testing.T, file ImportFile) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(importColumns) //nolint:errcheck // Flush reports write errors
	var want []csvRow
	for i, row := range file.Rows {
		in := row.Account
		w.Write([]string{in.SourceLogin, string(in.SourcePassword), in.DestinationLogin, string(in.DestinationPassword)}) //nolint:errcheck // as above
		want = append(want, csvRow{i + 2, in.SourceLogin, string(in.SourcePassword), in.DestinationLogin, string(effectiveDestinationPassword(in))})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	again := ParseAccountsCSV(b.Bytes(), EveryPassword)
	if len(again.Problems) > 0 {
		t.Fatalf("written back as %q: problems %+v", b.String(), again.Problems)
	}
	if got := csvRows(again); !slices.Equal(got, want) {
		t.Fatalf("written back as %q:\n got %+v\nwant %+v", b.String(), got, want)
	}
}

// checkImportFile checks what must hold of any parse of data.
func checkImportFile(t *testing.T, data []byte, file ImportFile) {
	t.Helper()
	lines := bytes.Count(data, []byte("\n")) + 1
	logins := map[string]int{}
	last := 0
	for _, row := range file.Rows {
		in := row.Account
		if row.Line <= last || row.Line > lines {
			t.Fatalf("row line %d after line %d, in a file of %d lines", row.Line, last, lines)
		}
		last = row.Line
		for _, login := range []string{in.SourceLogin, in.DestinationLogin} {
			if !goodLogin(login) {
				t.Fatalf("line %d: bad login %q", row.Line, login)
			}
		}
		for _, pw := range []Password{in.SourcePassword, effectiveDestinationPassword(in)} {
			if pw == "" || len(pw) > MaxPasswordBytes || strings.ContainsAny(string(pw), "\x00\r\n") {
				t.Fatalf("line %d: bad password %q", row.Line, string(pw))
			}
		}
		if earlier, dup := logins[in.SourceLogin]; dup {
			t.Fatalf("line %d: source login %q repeats line %d", row.Line, in.SourceLogin, earlier)
		}
		logins[in.SourceLogin] = row.Line
	}
	last = 0
	for _, p := range file.Problems {
		if p.Line < last || p.Line > lines || p.Reason == "" {
			t.Fatalf("problem %+v after one on line %d, in a file of %d lines", p, last, lines)
		}
		last = p.Line
	}
}

// goodLogin is what a login must be: non-empty, trimmed, UTF-8 without
// control characters (as IMAP's CTL, RFC 9051 §9: %x00-1F / %x7F), at most
// MaxLoginBytes.
func goodLogin(s string) bool {
	if s == "" || s != strings.TrimSpace(s) || len(s) > MaxLoginBytes || !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
