package postgres

import (
	"encoding/json"
	"reflect"
	"regexp"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestOptionsDecodeOnceAndStayApart: a task's options decoded a second
// time come from the memo, equal to the first, and what one caller
// changes in its copy (a folder map entry, a filter) no other sees.
func TestOptionsDecodeOnceAndStayApart(t *testing.T) {
	want := migration.TaskOptions{
		IncludeFolders: []*regexp.Regexp{regexp.MustCompile(`^INBOX`)},
		FolderMap:      map[string]string{"Sent Items": "Sent"},
		GmailLabels:    migration.GmailFirstLabel, VerifyCopies: migration.VerifyHeaders,
	}
	raw, err := json.Marshal(storedTaskOptions(want))
	if err != nil {
		t.Fatal(err)
	}
	memo := newOptionsMemo()
	first, err := memo.decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(memo.byText) != 1 {
		t.Fatalf("the memo holds %d texts after one decode, want 1", len(memo.byText))
	}
	first.FolderMap["Sent Items"] = "Elsewhere"
	first.IncludeFolders[0] = regexp.MustCompile(`^Archive`)

	second, err := memo.decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if second.FolderMap["Sent Items"] != "Sent" || second.IncludeFolders[0].String() != `^INBOX` {
		t.Fatalf("one caller's change reached another: folder map %v, include %v", second.FolderMap, second.IncludeFolders)
	}
	if !reflect.DeepEqual(second, want) {
		t.Fatalf("decoded again:\n%+v\nwant\n%+v", second, want)
	}

	if _, err := memo.decode([]byte(`{"include_folders":["("]}`)); err == nil {
		t.Fatal("an unreadable filter decoded")
	}
	if len(memo.byText) != 1 {
		t.Fatalf("an unreadable text was remembered: %d texts", len(memo.byText))
	}
}

// TestOptionsMemoIsBounded: past optionsMemoSize texts it starts again.
func TestOptionsMemoIsBounded(t *testing.T) {
	memo := newOptionsMemo()
	for i := range optionsMemoSize + 10 {
		raw, _ := json.Marshal(taskOptions{MaxMessageBytes: int64(i + 1)})
		got, err := memo.decode(raw)
		if err != nil || got.MaxMessageBytes != int64(i+1) {
			t.Fatalf("text %d: %+v, %v", i, got, err)
		}
	}
	if n := len(memo.byText); n > optionsMemoSize {
		t.Fatalf("the memo holds %d texts, over its bound %d", n, optionsMemoSize)
	}
}
