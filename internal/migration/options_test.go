package migration

import (
	"fmt"
	"strings"
	"testing"
)

func TestTaskOptionsNormalize(t *testing.T) {
	t.Parallel()
	patterns := func(n int) []string { return strings.Split(strings.Repeat("x,", n-1)+"x", ",") }
	folderMap := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprint("f", i)] = "g"
		}
		return m
	}
	long := strings.Repeat("a", maxFolderNameBytes+1)
	const (
		include  = "options.include_folders "
		exclude  = "options.exclude_folders "
		badName  = ": folder names must be non-empty UTF-8 of at most 1024 bytes without control characters"
		parallel = "options.parallel_accounts must be between 1 and 64, or 0 for 4"
	)
	for _, tc := range []struct {
		name         string
		in           TaskOptions
		wantParallel int
		wantErr      string
	}{
		{"zero value", TaskOptions{}, 4, ""},
		{"everything set", TaskOptions{
			IncludeFolders:   []string{"^INBOX$", `^Archive/\d{4}$`, "(?i)sent"},
			ExcludeFolders:   []string{"^Trash", "Junk|Spam"},
			FolderMap:        map[string]string{"Sent Items": "Sent", "Gelöscht": "Trash/Old"},
			MaxMessageBytes:  25 << 20,
			Since:            "2024-01-31",
			ParallelAccounts: 8,
		}, 8, ""},
		{"empty pattern matches all", TaskOptions{IncludeFolders: []string{""}}, 4, ""},
		{"non-ASCII pattern", TaskOptions{IncludeFolders: []string{"^Entwürfe$"}}, 4, ""},
		{"100 patterns", TaskOptions{IncludeFolders: patterns(100), ExcludeFolders: patterns(100)}, 4, ""},
		{"101 include patterns", TaskOptions{IncludeFolders: patterns(101)}, 0, include + "must have at most 100 patterns"},
		{"101 exclude patterns", TaskOptions{ExcludeFolders: patterns(101)}, 0, exclude + "must have at most 100 patterns"},
		{"include does not compile", TaskOptions{IncludeFolders: []string{"ok", "("}}, 0,
			include + "pattern \"(\" does not compile: error parsing regexp: missing closing ): `(`"},
		{"exclude does not compile", TaskOptions{ExcludeFolders: []string{`a\`}}, 0,
			exclude + "pattern \"a\\\\\" does not compile: error parsing regexp: trailing backslash at end of expression: ``"},
		{"Perl lookahead is not RE2", TaskOptions{ExcludeFolders: []string{"(?!x)"}}, 0,
			exclude + "pattern \"(?!x)\" does not compile: error parsing regexp: invalid or unsupported Perl syntax: `(?!`"},
		{"include checked before exclude", TaskOptions{IncludeFolders: []string{"["}, ExcludeFolders: []string{"("}}, 0,
			include + "pattern \"[\" does not compile: error parsing regexp: missing closing ]: `[`"},
		{"pattern not UTF-8", TaskOptions{IncludeFolders: []string{"a\xff"}}, 0,
			include + `pattern "a\xff" must be valid UTF-8 of at most 1024 bytes without control characters`},
		{"longest pattern", TaskOptions{IncludeFolders: []string{long[1:]}}, 4, ""},
		{"pattern too long, quoted to 40 characters", TaskOptions{ExcludeFolders: []string{long}}, 0,
			exclude + `pattern "` + long[:40] + `" must be valid UTF-8 of at most 1024 bytes without control characters`},
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
		{"leap day", TaskOptions{Since: "2024-02-29"}, 4, ""},
		{"no such day", TaskOptions{Since: "2023-02-29"}, 0, "options.since must be a date like 2024-01-31"},
		{"one-digit month", TaskOptions{Since: "2024-1-31"}, 0, "options.since must be a date like 2024-01-31"},
		{"day first", TaskOptions{Since: "31.01.2024"}, 0, "options.since must be a date like 2024-01-31"},
		{"date and time", TaskOptions{Since: "2024-01-31T00:00:00Z"}, 0, "options.since must be a date like 2024-01-31"},
		{"blank date", TaskOptions{Since: " "}, 0, "options.since must be a date like 2024-01-31"},
		{"one account at a time", TaskOptions{ParallelAccounts: 1}, 1, ""},
		{"most accounts at a time", TaskOptions{ParallelAccounts: 64}, 64, ""},
		{"too many accounts at a time", TaskOptions{ParallelAccounts: 65}, 0, parallel},
		{"negative parallel accounts", TaskOptions{ParallelAccounts: -1}, 0, parallel},
		{"first error wins", TaskOptions{MaxMessageBytes: -1, Since: "x", ParallelAccounts: -1}, 0,
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
			if o.ParallelAccounts != tc.wantParallel {
				t.Errorf("parallel accounts %d, want %d", o.ParallelAccounts, tc.wantParallel)
			}
			if o.Since != tc.in.Since || o.MaxMessageBytes != tc.in.MaxMessageBytes {
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
		{"same endpoint on both sides", spec("move mailboxes", 3, 3, TaskOptions{}), ""},
		{"longest name", spec(strings.Repeat("n", MaxLabelBytes), 1, 2, TaskOptions{}), ""},
		{"name too long", spec(strings.Repeat("n", MaxLabelBytes+1), 1, 2, TaskOptions{}), "name must be at most 1024 bytes"},
		{"name not UTF-8", spec("\xc3", 1, 2, TaskOptions{}), "name must be valid UTF-8"},
		{"no source", spec("t", 0, 2, TaskOptions{}), "source_endpoint_id must name an endpoint"},
		{"negative source", spec("t", -1, 2, TaskOptions{}), "source_endpoint_id must name an endpoint"},
		{"no destination", spec("t", 1, 0, TaskOptions{}), "destination_endpoint_id must name an endpoint"},
		{"name checked first", spec("\xc3", 0, 0, TaskOptions{}), "name must be valid UTF-8"},
		{"bad options", spec("t", 1, 2, TaskOptions{ParallelAccounts: 100}), "options.parallel_accounts must be between 1 and 64, or 0 for 4"},
		{"endpoints checked before options", spec("t", 1, 0, TaskOptions{Since: "x"}), "destination_endpoint_id must name an endpoint"},
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
