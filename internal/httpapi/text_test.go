package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestStoredTextRefusesWhatItCannotKeep sends every route that stores text
// each kind of text that must not be stored, in each of its fields: a
// clear 400 naming the field, never a 500 from PostgreSQL, never a U+FFFD
// stored in place of what was sent.
func TestStoredTextRefusesWhatItCannotKeep(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, srcID, dstID := s.newTask(t)
	accountID := s.createAccount(t, taskID, "alice@old.example")
	// Each bad value as written in JSON, with what the refusal says.
	type bad struct{ name, literal, says string }
	const control, notUTF8, passwordRule = "control characters", "UTF-8", "without NUL, CR or LF"
	nul := bad{"NUL", `"a\u0000b"`, control}
	invalid := []bad{
		{"a byte that is not UTF-8", "\"a\xffb\"", notUTF8},
		{"an overlong form", "\"a\xc0\xafb\"", notUTF8},
		{"a lone high surrogate", `"a\ud800b"`, notUTF8},
		{"a lone low surrogate", `"a\udc00b"`, notUTF8},
		{"a high surrogate before a non-surrogate", `"a\ud800\u0041"`, notUTF8},
	}
	text := append([]bad{nul, {"BEL", `"a\u0007b"`, control}, {"C1 NEL, escaped", `"a\u0085b"`, control},
		{"C1 CSI, raw", "\"a\xc2\x9bb\"", control}}, invalid...)
	password := append([]bad{{"NUL", `"a\u0000b"`, passwordRule}}, invalid...)

	endpoint := func(label, host string) string {
		return fmt.Sprintf(`{"role_label":%s,"host":%s,"port":993,"tls_mode":"ssl"}`, label, host)
	}
	task := func(name, include, exclude, mapFrom, mapTo string) string {
		return fmt.Sprintf(`{"name":%s,"source_endpoint_id":%d,"destination_endpoint_id":%d,
			"options":{"include_folders":[%s],"exclude_folders":[%s],"folder_map":{%s:%s}}}`,
			name, srcID, dstID, include, exclude, mapFrom, mapTo)
	}
	account := func(sl, sp, dl, dp string) string {
		return fmt.Sprintf(`{"source_login":%s,"source_password":%s,"destination_login":%s,"destination_password":%s}`, sl, sp, dl, dp)
	}
	ok := `"fine"`
	fields := []struct {
		field string
		bad   []bad
		body  func(v string) string
	}{
		{"role_label", text, func(v string) string { return endpoint(v, `"imap.example"`) }},
		{"host", text, func(v string) string { return endpoint(ok, v) }},
		{"name", text, func(v string) string { return task(v, ok, ok, `"Old"`, `"New"`) }},
		{"options.include_folders", text, func(v string) string { return task(ok, v, ok, `"Old"`, `"New"`) }},
		{"options.exclude_folders", text, func(v string) string { return task(ok, ok, v, `"Old"`, `"New"`) }},
		{"options.folder_map", text, func(v string) string { return task(ok, ok, ok, v, `"New"`) }},
		{"options.folder_map", text, func(v string) string { return task(ok, ok, ok, `"Old"`, v) }},
		{"source_login", text, func(v string) string { return account(v, ok, ok, ok) }},
		{"destination_login", text, func(v string) string { return account(`"b@x"`, ok, v, ok) }},
		{"source_password", password, func(v string) string { return account(`"c@x"`, v, ok, ok) }},
		{"destination_password", password, func(v string) string { return account(`"d@x"`, ok, ok, v) }},
	}
	routes := map[string][]string{ // by the first field each route stores
		"role_label": {"POST /endpoints", fmt.Sprintf("PUT /endpoints/%d", srcID)},
		"name":       {"POST /tasks", fmt.Sprintf("PUT /tasks/%d", taskID)},
		"source_login": {fmt.Sprintf("POST /tasks/%d/accounts", taskID),
			fmt.Sprintf("PUT /tasks/%d/accounts/%d", taskID, accountID)},
	}
	routes["host"] = routes["role_label"]
	for _, f := range []string{"options.include_folders", "options.exclude_folders", "options.folder_map"} {
		routes[f] = routes["name"]
	}
	for _, f := range []string{"destination_login", "source_password", "destination_password"} {
		routes[f] = routes["source_login"]
	}
	for _, f := range fields {
		for _, route := range routes[f.field] {
			method, path, _ := strings.Cut(route, " ")
			for _, b := range f.bad {
				got := s.do(t, method, path, f.body(b.literal))
				if got.status != http.StatusBadRequest || !strings.HasPrefix(got.body, f.field) || !strings.Contains(got.body, b.says) {
					t.Errorf("%s with %s in %s: %d %q, want 400 naming %s: %s", route, b.name, f.field, got.status, got.body, f.field, b.says)
				}
			}
		}
	}
	// Nothing was stored or changed on the way.
	for path, want := range map[string]string{
		"/endpoints": "", fmt.Sprintf("/tasks/%d/accounts", taskID): "alice@old.example",
	} {
		if got := s.do(t, "GET", path, ""); got.status != http.StatusOK || strings.Contains(got.body, "fine") ||
			!strings.Contains(got.body, want) {
			t.Errorf("GET %s after the refusals: %d %s", path, got.status, got.body)
		}
	}
}

// TestImportedTextRefusesWhatItCannotKeep: the CSV import names the line
// and the field, and stores none of the file.
func TestImportedTextRefusesWhatItCannotKeep(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID, _, _ := s.newTask(t)
	path := fmt.Sprintf("/tasks/%d/accounts/import", taskID)
	for _, tc := range []struct{ csv, says string }{
		{"ok@x,pw\na\x00b,pw\n", "line 2: source_login"},
		{"a\xffb,pw\n", "line 1: source_login"},
		{"a\xc2\x85b,pw\n", "line 1: source_login"},
		{"ok@x,pw,d\x07x,pw\n", "line 1: destination_login"},
		{"ok@x,p\x00w\n", "line 1: source_password"},
	} {
		got := s.do(t, "POST", path, tc.csv)
		if got.status != http.StatusBadRequest || !strings.Contains(got.body, tc.says) {
			t.Errorf("import %q: %d %q, want 400 with %q", tc.csv, got.status, got.body, tc.says)
		}
	}
	if ids := s.accountIDs(t, taskID); len(ids) != 0 {
		t.Errorf("%d accounts stored from refused files", len(ids))
	}
}
