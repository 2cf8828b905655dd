package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestExampleConfigNamesEverySetting keeps contrib/mailmigrate.env in step
// with the flags: every variable that `serve -h` names is in the example,
// and the example names no variable that serve does not read.
func TestExampleConfigNamesEverySetting(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("../../contrib/mailmigrate.env")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"serve", "-h"}, envFunc(nil), &stdout, &stderr)
	variable := regexp.MustCompile(`\bMAILMIGRATE_[A-Z_]+[A-Z]\b`)
	help := map[string]bool{}
	for _, v := range variable.FindAllString(stderr.String(), -1) {
		help[v] = true
		if !bytes.Contains(example, []byte(v+"=")) {
			t.Errorf("contrib/mailmigrate.env does not show %s", v)
		}
	}
	// The API token is the CLI's too, and its place in serve's flags is on
	// its way; any other variable of the example must be serve's.
	for _, v := range variable.FindAllString(string(example), -1) {
		if !help[v] && v != "MAILMIGRATE_API_TOKEN" {
			t.Errorf("contrib/mailmigrate.env shows %s, which serve -h does not name", v)
		}
	}
	if len(help) < 7 || !strings.Contains(stderr.String(), "MAILMIGRATE_LISTEN") {
		t.Fatalf("serve -h names %d variables:\n%s", len(help), stderr.String())
	}
}
