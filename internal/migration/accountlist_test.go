package migration

import (
	"strings"
	"testing"
)

func TestParseAccountSort(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]AccountSort{
		"":          {By: OrderByID},
		"id":        {By: OrderByID},
		"-login":    {By: OrderByLogin, Descending: true},
		"state":     {By: OrderByState},
		"-progress": {By: OrderByProgress, Descending: true},
		"updated":   {By: OrderByUpdated},
	} {
		got, err := ParseAccountSort(text)
		if err != nil || got != want {
			t.Errorf("ParseAccountSort(%q) = %+v, %v; want %+v", text, got, err, want)
		}
	}
	for _, text := range []string{"size", "--login", "Login", "login-", " login", "-"} {
		if _, err := ParseAccountSort(text); err == nil {
			t.Errorf("ParseAccountSort(%q) took it", text)
		}
	}
}

func TestAccountCursorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []AccountCursor{
		{Sort: AccountSort{By: OrderByID}, ID: 1},
		{Sort: AccountSort{By: OrderByLogin, Descending: true}, Key: "jörg@example.org", ID: 1 << 60},
		{Sort: AccountSort{By: OrderByState}, Key: "03bob\"&=?/", ID: 7},
	} {
		text := c.String()
		if strings.ContainsAny(text, "&=?/+ ") {
			t.Errorf("cursor %q needs escaping in a URL", text)
		}
		got, err := ParseAccountCursor(text)
		if err != nil || got != c {
			t.Errorf("ParseAccountCursor(%q) = %+v, %v; want %+v", text, got, err, c)
		}
	}
	valid := AccountCursor{Sort: AccountSort{By: OrderByLogin}, Key: "a", ID: 3}.String()
	for _, text := range []string{"", "abc", "!!!", valid[:len(valid)-2], "eyJzIjoic2l6ZSIsImsiOiIiLCJpIjoxfQ", // sort "size"
		"eyJzIjoiaWQiLCJrIjoiIiwiaSI6MH0", strings.Repeat("A", maxCursorBytes+1)} { // id 0
		if _, err := ParseAccountCursor(text); err == nil {
			t.Errorf("ParseAccountCursor(%.40q) took it", text)
		}
	}
}
