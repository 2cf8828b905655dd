// Package docs holds the project's documentation; its test keeps the
// links into it from the code and between its pages true.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeLink is a reference from a comment: docs/design.md#task-states.
var codeLink = regexp.MustCompile(`docs/([a-z-]+\.md)#([a-z0-9-]+)`)

// pageLink is a Markdown link between pages, or within one:
// (api.md#run-control), (#limits), (../README.md#two-commands).
var pageLink = regexp.MustCompile(`\]\(((?:\.\./)?[A-Za-z-]*\.md)?#([a-z0-9-]+)\)`)

// TestLinksNameHeadingsThatExist: every docs/PAGE.md#anchor in the code and
// every PAGE.md#anchor between the pages names a heading of that page (as
// GitHub makes anchors of headings), so that a renamed or moved section
// breaks the build instead of the reader's link.
func TestLinksNameHeadingsThatExist(t *testing.T) {
	t.Parallel()
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		anchors[page] = headingAnchors(t, page)
		return anchors[page]
	}
	checked := 0
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "gen" || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if d.IsDir() || (ext != ".go" && ext != ".js" && ext != ".md") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range codeLink.FindAllStringSubmatch(string(data), -1) {
			checked++
			if !anchorsOf(filepath.Join("..", "docs", m[1]))[m[2]] {
				t.Errorf("%s links to docs/%s#%s, which has no such heading", path, m[1], m[2])
			}
		}
		if ext != ".md" {
			return nil
		}
		for _, m := range pageLink.FindAllStringSubmatch(string(data), -1) {
			target := path
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(path), m[1])
			}
			checked++
			if !anchorsOf(target)[m[2]] {
				t.Errorf("%s links to %s#%s, which has no such heading", path, target, m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Errorf("checked %d links; the tree has more: is the walk right?", checked)
	}
}

// headingAnchors are the anchors GitHub gives the headings of a page:
// lower case, punctuation dropped, spaces as hyphens.
func headingAnchors(t *testing.T, page string) map[string]bool {
	data, err := os.ReadFile(page)
	if err != nil {
		t.Errorf("a link names %s: %v", page, err)
		return map[string]bool{}
	}
	anchors := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		anchors[slug(strings.TrimLeft(line, "# "))] = true
	}
	return anchors
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
