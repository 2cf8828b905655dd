package web_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// queryFields are fields of query strings and selections that no form
// sends: a refusal of one is the console's fault, not a person's.
var queryFields = map[string]bool{"after": true, "cursor": true, "filter": true, "limit": true, "q": true, "sort": true,
	"state": true, "ids": true, "selection": true, "file": true, "redirect_uri": true, "login_test": true}

// TestEveryRefusedFieldHasALabel: every field the service may refuse by
// name (InvalidError in the domain and the handlers) has a label in the
// console's table (api.js fieldLabels), so a refusal never shows a person
// an API path.
func TestEveryRefusedFieldHasALabel(t *testing.T) {
	script, err := os.ReadFile("assets/api.js")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(script), "export const fieldLabels = {")
	table, _, _ = strings.Cut(table, "};")
	named := regexp.MustCompile(`(?:invalid|checkText|checkPassword|checkURL)\("([a-z_.0-9]+)"|Field: "([a-z_.0-9]+)"|"((?:auth|options|limits|sieve)\.[a-z_.0-9]+)"`)
	var sources []string
	for _, dir := range []string{"../migration", "../httpapi"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, files...)
	}
	checked := 0
	for _, file := range sources {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		code, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(code), -1) {
			field := m[1] + m[2] + m[3]
			if queryFields[field] {
				continue
			}
			checked++
			if !strings.Contains(table, "'"+field+"':") && !strings.Contains(table, " "+field+":") && !strings.HasPrefix(strings.TrimSpace(table), field+":") {
				t.Errorf("%s refuses %q, which api.js's fieldLabels does not name: a person would read the API's path", file, field)
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked %d refused fields; the service names more: is the pattern right?", checked)
	}
}
