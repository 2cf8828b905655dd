package migration

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFolderPatterns(t *testing.T) {
	t.Parallel()
	patterns := func(n int) []string { return strings.Split(strings.Repeat("x,", n-1)+"x", ",") }
	long := strings.Repeat("a", maxFolderNameBytes+1)
	const field = "options.include_folders "
	for _, tc := range []struct {
		name    string
		in      []string
		wantErr string
		matches string // a folder name the parsed patterns must match
		misses  string // and one they must not
	}{
		{"none", nil, "", "", ""},
		{"several", []string{"^INBOX$", `^Archive/\d{4}$`, "(?i)sent"}, "", "Archive/2024", "Archive/24"},
		{"empty pattern matches all", []string{""}, "", "anything", ""},
		{"non-ASCII pattern", []string{"^Entwürfe$"}, "", "Entwürfe", "Entwurfe"},
		{"100 patterns", patterns(100), "", "x", "y"},
		{"101 patterns", patterns(101), field + "must have at most 100 patterns", "", ""},
		{"does not compile", []string{"ok", "("}, field + "pattern \"(\" does not compile: error parsing regexp: missing closing ): `(`", "", ""},
		{"trailing backslash", []string{`a\`}, field + "pattern \"a\\\\\" does not compile: error parsing regexp: trailing backslash at end of expression: ``", "", ""},
		{"Perl lookahead is not RE2", []string{"(?!x)"}, field + "pattern \"(?!x)\" does not compile: error parsing regexp: invalid or unsupported Perl syntax: `(?!`", "", ""},
		{"not UTF-8", []string{"a\xff"}, field + `pattern "a\xff" must be valid UTF-8 of at most 1024 bytes without control characters`, "", ""},
		{"longest pattern", []string{long[1:]}, "", long[1:], "b"},
		{"too long, quoted to 40 characters", []string{long}, field + `pattern "` + long[:40] + `" must be valid UTF-8 of at most 1024 bytes without control characters`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFolderPatterns("options.include_folders", tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v,\nwant %q", err, tc.wantErr)
				}
				if _, ok := err.(*InvalidError); !ok {
					t.Errorf("error is %T, want *InvalidError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if texts := FolderPatternTexts(got); !slices.Equal(texts, tc.in) {
				t.Errorf("patterns read back as %q, want %q", texts, tc.in)
			}
			matchesAny := func(name string) bool {
				return slices.ContainsFunc(got, func(re *regexp.Regexp) bool { return re.MatchString(name) })
			}
			if tc.matches != "" && !matchesAny(tc.matches) {
				t.Errorf("no pattern matches %q", tc.matches)
			}
			if tc.misses != "" && matchesAny(tc.misses) {
				t.Errorf("a pattern matches %q", tc.misses)
			}
		})
	}
}

func TestParseSince(t *testing.T) {
	t.Parallel()
	const bad = "options.since must be a date like 2024-01-31"
	for _, tc := range []struct {
		in      string
		want    time.Time
		wantErr string
	}{
		{"", time.Time{}, ""},
		{"2024-01-31", time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), ""},
		{"2024-02-29", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), ""},
		{"2023-02-29", time.Time{}, bad},
		{"2024-1-31", time.Time{}, bad},
		{"31.01.2024", time.Time{}, bad},
		{"2024-01-31T00:00:00Z", time.Time{}, bad},
		{" ", time.Time{}, bad},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSince(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("ParseSince(%q) = %v, want %v", tc.in, got, tc.want)
			}
			if text := SinceText(got); text != tc.in {
				t.Errorf("SinceText = %q, want %q", text, tc.in)
			}
		})
	}
}

func TestTaskOptionsNormalize(t *testing.T) {
	t.Parallel()
	folderMap := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprint("f", i)] = "g"
		}
		return m
	}
	long := strings.Repeat("a", maxFolderNameBytes+1)
	const (
		badName  = ": folder names must be non-empty UTF-8 of at most 1024 bytes without control characters"
		parallel = "options.parallel_accounts must be between 1 and 64, or 0 for 4"
	)
	since := time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name         string
		in           TaskOptions
		wantParallel int
		wantErr      string
	}{
		{"zero value", TaskOptions{}, 4, ""},
		{"everything set", TaskOptions{
			IncludeFolders:   []*regexp.Regexp{regexp.MustCompile("^INBOX$")},
			ExcludeFolders:   []*regexp.Regexp{regexp.MustCompile("^Trash")},
			FolderMap:        map[string]string{"Sent Items": "Sent", "Gelöscht": "Trash/Old"},
			MaxMessageBytes:  25 << 20,
			Since:            since,
			ParallelAccounts: 8,
		}, 8, ""},
		{"1000 folder map entries", TaskOptions{FolderMap: folderMap(1000)}, 4, ""},
		{"1001 folder map entries", TaskOptions{FolderMap: folderMap(1001)}, 0, "options.folder_map must have at most 1000 entries"},
		{"folder map to the same name", TaskOptions{FolderMap: map[string]string{"a": "x", "b": "x"}}, 4, ""},
		{"folder map empty source", TaskOptions{FolderMap: map[string]string{"": "Sent"}}, 0,
			`options.folder_map entry "" → "Sent"` + badName},
		{"folder map empty destination", TaskOptions{FolderMap: map[string]string{"Sent": ""}}, 0,
			`options.folder_map entry "Sent" → ""` + badName},
		{"folder map control character", TaskOptions{FolderMap: map[string]string{"Sent": "a\nb"}}, 0,
			`options.folder_map entry "Sent" → "a\nb"` + badName},
		{"folder map DEL", TaskOptions{FolderMap: map[string]string{"a\x7f": "b"}}, 0,
			`options.folder_map entry "a\x7f" → "b"` + badName},
		{"folder map not UTF-8", TaskOptions{FolderMap: map[string]string{"\xff": "b"}}, 0,
			`options.folder_map entry "\xff" → "b"` + badName},
		{"folder map name too long", TaskOptions{FolderMap: map[string]string{"a": long}}, 0,
			`options.folder_map entry "a" → "` + long[:40] + `"` + badName},
		{"longest folder names", TaskOptions{FolderMap: map[string]string{long[1:]: long[1:]}}, 4, ""},
		{"no size limit", TaskOptions{MaxMessageBytes: 0}, 4, ""},
		{"negative size", TaskOptions{MaxMessageBytes: -1}, 0, "options.max_message_bytes must be 0 (no limit) or more"},
		{"one account at a time", TaskOptions{ParallelAccounts: 1}, 1, ""},
		{"most accounts at a time", TaskOptions{ParallelAccounts: 64}, 64, ""},
		{"too many accounts at a time", TaskOptions{ParallelAccounts: 65}, 0, parallel},
		{"negative parallel accounts", TaskOptions{ParallelAccounts: -1}, 0, parallel},
		{"copies counted only", TaskOptions{VerifyCopies: VerifyCounts}, 4, ""},
		{"unknown depth of verification", TaskOptions{VerifyCopies: "bytes"}, 0, "options.verify_copies must be headers|counts|full"},
		{"first error wins", TaskOptions{MaxMessageBytes: -1, ParallelAccounts: -1}, 0,
			"options.max_message_bytes must be 0 (no limit) or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.in
			err := o.Normalize()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v,\nwant %q", err, tc.wantErr)
				}
				if _, ok := err.(*InvalidError); !ok {
					t.Errorf("error is %T, want *InvalidError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := cmp.Or(tc.in.VerifyCopies, VerifyHeaders); o.VerifyCopies != want {
				t.Errorf("verify copies %q, want %q", o.VerifyCopies, want)
			}
			if o.ParallelAccounts != tc.wantParallel {
				t.Errorf("parallel accounts %d, want %d", o.ParallelAccounts, tc.wantParallel)
			}
			if !o.Since.Equal(tc.in.Since) || o.MaxMessageBytes != tc.in.MaxMessageBytes {
				t.Errorf("changed since or max message bytes: %+v from %+v", o, tc.in)
			}
		})
	}
}

func TestTaskSpecNormalize(t *testing.T) {
	t.Parallel()
	spec := func(name string, source, destination int64, o TaskOptions) TaskSpec {
		return TaskSpec{Name: name, SourceEndpointID: source, DestinationEndpointID: destination, Options: o}
	}
	for _, tc := range []struct {
		name    string
		in      TaskSpec
		wantErr string
	}{
		{"minimal", spec("", 1, 2, TaskOptions{}), ""},
		{"same endpoint on both sides", spec("move mailboxes", 3, 3, TaskOptions{}), "destination_endpoint_id must differ from source_endpoint_id (to move mailboxes within one server, register it twice)"},
		{"longest name", spec(strings.Repeat("n", MaxLabelBytes), 1, 2, TaskOptions{}), ""},
		{"name too long", spec(strings.Repeat("n", MaxLabelBytes+1), 1, 2, TaskOptions{}), "name must be at most 1024 bytes"},
		{"name not UTF-8", spec("\xc3", 1, 2, TaskOptions{}), "name must be valid UTF-8"},
		{"no source", spec("t", 0, 2, TaskOptions{}), "source_endpoint_id must name an endpoint"},
		{"negative source", spec("t", -1, 2, TaskOptions{}), "source_endpoint_id must name an endpoint"},
		{"no destination", spec("t", 1, 0, TaskOptions{}), "destination_endpoint_id must name an endpoint"},
		{"name checked first", spec("\xc3", 0, 0, TaskOptions{}), "name must be valid UTF-8"},
		{"bad options", spec("t", 1, 2, TaskOptions{ParallelAccounts: 100}), "options.parallel_accounts must be between 1 and 64, or 0 for 4"},
		{"endpoints checked before options", spec("t", 1, 0, TaskOptions{MaxMessageBytes: -1}), "destination_endpoint_id must name an endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.in
			err := s.Normalize()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Options.ParallelAccounts != DefaultParallelAccounts {
				t.Errorf("options not normalized: parallel accounts %d", s.Options.ParallelAccounts)
			}
		})
	}
}
