package migration

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSpreadsheetSafe(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=SUM(A1:A9)":                 "'=SUM(A1:A9)",
		`=HYPERLINK("http://x","y")`:  `'=HYPERLINK("http://x","y")`,
		"+1+cmd|' /C calc'!A0":        "'+1+cmd|' /C calc'!A0",
		"-2+3":                        "'-2+3",
		"@SUM(1)":                     "'@SUM(1)",
		"\t=1":                        "'\t'=1",
		"x;=1+1":                      "x;'=1+1",
		"x,@SUM(1)":                   "x,'@SUM(1)",
		"a\t-1":                       "a\t'-1",
		"x| +1":                       "x| '+1",
		`x;"=1+1"`:                    `x;"'=1+1"`,
		" =1":                         " '=1",
		"quota exceeded; 5 left":      "quota exceeded; 5 left",
		"\r=1":                        "'\r=1",
		"=":                           "'=",
		"":                            "",
		"alice@old.example":           "alice@old.example",
		"a=b":                         "a=b",
		"'=already quoted":            "'=already quoted",
		"jürgen-müller@example.de":    "jürgen-müller@example.de",
		"authentication failed: =x":   "authentication failed: =x",
		"ＵＴＦ-8 ＝ fine, not ASCII '='": "ＵＴＦ-8 ＝ fine, not ASCII '='",
	} {
		if got := spreadsheetSafe(in); got != want {
			t.Errorf("spreadsheetSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTestSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   *TestResult
		want string
	}{
		{nil, ""},
		{&TestResult{OK: true, Error: "ignored"}, "ok"},
		{&TestResult{Error: "authentication failed"}, "failed: authentication failed"},
		{&TestResult{}, "failed: "},
	} {
		if got := testSummary(tc.in); got != tc.want {
			t.Errorf("testSummary(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReportRow(t *testing.T) {
	t.Parallel()
	started := time.Date(2025, 3, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	finished := started.Add(90 * time.Minute)
	full := Account{
		ID:               42,
		TaskID:           7,
		SourceLogin:      "=cmd|'/C calc'!A0",
		DestinationLogin: "@bob@new.example",
		State:            AccountCompletedWithErrors,
		SourceTest:       &TestResult{OK: true, TestedAt: started},
		DestinationTest:  &TestResult{Error: "quota exceeded", TestedAt: started},
		Progress: Progress{
			FoldersTotal: 9, FoldersDone: 8, MessagesTotal: 1000, MessagesCopied: 990,
			MessagesSkipped: 7, MessagesFailed: 3, BytesCopied: 123456789,
			SourceCounted: true, SourceMessages: 1000, SourceBytes: 124000000,
		},
		LastError:  "-3 messages failed",
		CreatedAt:  started,
		UpdatedAt:  finished,
		StartedAt:  &started,
		FinishedAt: &finished,
		Scripts: &ScriptsEnd{Copied: []string{"filters"}, Active: "filters",
			Refused: []ScriptProblem{{Script: "=headers", Reason: "unknown Sieve capability `editheader'"}}},
	}
	for _, tc := range []struct {
		name    string
		in      Account
		altered int64
		want    []string
	}{
		{"everything", full, 2, []string{
			"42", "'=cmd|'/C calc'!A0", "'@bob@new.example", "completed_with_errors",
			"ok", "failed: quota exceeded", "8", "1000",
			"990", "7", "3", "123456789",
			"2025-03-01T09:00:00Z", "2025-03-01T10:30:00Z", "'-3 messages failed",
			"1000", "124000000", "5400",
			"1 copied; 0 unchanged; 1 refused: =headers (unknown Sieve capability `editheader'); active: filters", "2",
		}},
		{"never run", Account{ID: 1, SourceLogin: "alice", DestinationLogin: "alice", State: AccountIdle}, 0, []string{
			"1", "alice", "alice", "idle",
			"", "", "0", "0",
			"0", "0", "0", "0",
			"", "", "",
			"", "", "", "", "0",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := reportRow(tc.in, tc.altered)
			if len(got) != len(reportColumns) {
				t.Fatalf("%d cells for %d columns", len(got), len(reportColumns))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("row\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestPassCells: an account's cells of a pass are what that pass did for
// it, and empty for a pass it did not run in.
func TestPassCells(t *testing.T) {
	t.Parallel()
	started := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	passes := []AccountPass{
		{Pass: 1, State: AccountCompleted, StartedAt: &started, FinishedAt: started.Add(95 * time.Second),
			Figures: Progress{MessagesCopied: 40, BytesCopied: 4000}},
		{Pass: 3, State: AccountFailed, StartedAt: &started, FinishedAt: started.Add(2 * time.Second),
			Figures: Progress{MessagesSkipped: 40, MessagesFailed: 1}, LastError: "quota"},
	}
	for n, want := range map[int][]string{
		1: {"completed", "40", "0", "0", "4000", "95"},
		2: {"", "", "", "", "", ""},
		3: {"failed", "0", "40", "1", "0", "2"},
	} {
		if got := passCells(passes, n); !slices.Equal(got, want) || len(got) != len(passColumns(n)) {
			t.Errorf("pass %d: %q, want %q", n, got, want)
		}
	}
	if got := passColumns(2); got[0] != "pass_2_state" || got[5] != "pass_2_duration_seconds" {
		t.Errorf("columns of pass 2: %q", got)
	}
}

// TestReportHasNoPassword: no column is about a password, and an account as
// the report sees it cannot carry one.
func TestReportHasNoPassword(t *testing.T) {
	t.Parallel()
	for _, c := range reportColumns {
		if strings.Contains(strings.ToLower(c), "password") || strings.Contains(strings.ToLower(c), "secret") {
			t.Errorf("report column %q", c)
		}
	}
	password := reflect.TypeFor[Password]()
	var check func(path string, typ reflect.Type)
	check = func(path string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ == password {
			t.Errorf("%s is a Password", path)
		}
		if typ.Kind() == reflect.Struct && typ.PkgPath() == password.PkgPath() {
			for f := range typ.Fields() {
				if strings.Contains(strings.ToLower(f.Name), "password") {
					t.Errorf("%s.%s", path, f.Name)
				}
				check(path+"."+f.Name, f.Type)
			}
		}
	}
	check("Account", reflect.TypeFor[Account]())
}
