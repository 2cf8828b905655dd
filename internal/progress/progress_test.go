package progress

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	apispec "github.com/mailmigrate/mailmigrate/api"
)

// TestFiguresAreTheAPIsProgress: the JSON of Figures has exactly the
// properties of the API's Progress, the required ones always and the
// source's size null until counted, so that the API's type can be this one.
func TestFiguresAreTheAPIsProgress(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(apispec.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["Progress"].Value
	for _, f := range []Figures{{}, {MessagesCopied: 3, SourceCounted: true, SourceMessages: 5, SourceBytes: 900}} {
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Sorted(maps.Keys(fields)), slices.Sorted(maps.Keys(schema.Properties)); !slices.Equal(got, want) {
			t.Errorf("%s has the fields %q, the API's Progress %q", data, got, want)
		}
		if err := schema.VisitJSON(fields); err != nil {
			t.Errorf("%s is not the API's Progress: %v", data, err)
		}
		if counted := fields["source_messages"] != nil; counted != f.SourceCounted {
			t.Errorf("%s: source counted %v, want %v", data, counted, f.SourceCounted)
		}
	}
}

// TestFiguresRead: what the API writes reads back the same, and so do the
// figures of events stored before the events kept the API's JSON.
func TestFiguresRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json string
		want       Figures
	}{
		{"not counted", `{"folders_total":2,"folders_done":1,"messages_total":4,"messages_copied":3,"messages_skipped":1,"messages_failed":0,"bytes_copied":300,"source_messages":null,"source_bytes":null}`,
			Figures{FoldersTotal: 2, FoldersDone: 1, MessagesTotal: 4, MessagesCopied: 3, MessagesSkipped: 1, BytesCopied: 300}},
		{"counted", `{"messages_copied":3,"source_messages":5,"source_bytes":900}`,
			Figures{MessagesCopied: 3, SourceCounted: true, SourceMessages: 5, SourceBytes: 900}},
		{"counted empty", `{"source_messages":0,"source_bytes":0}`, Figures{SourceCounted: true}},
		{"an old event, counted", `{"messages_copied":3,"source_counted":true,"source_messages":5,"source_bytes":900}`,
			Figures{MessagesCopied: 3, SourceCounted: true, SourceMessages: 5, SourceBytes: 900}},
		{"an old event, counted empty", `{"messages_copied":0,"source_counted":true}`, Figures{SourceCounted: true}},
		{"an old event, not counted", `{"messages_copied":3}`, Figures{MessagesCopied: 3}},
	} {
		var got Figures
		if err := json.Unmarshal([]byte(tc.json), &got); err != nil || got != tc.want {
			t.Errorf("%s: %s read as %+v (%v), want %+v", tc.name, tc.json, got, err, tc.want)
		}
		again, err := json.Marshal(got)
		var back Figures
		if err != nil || json.Unmarshal(again, &back) != nil || back != got {
			t.Errorf("%s: %+v written as %s reads back as %+v", tc.name, got, again, back)
		}
	}
}
