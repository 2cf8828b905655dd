package sieve

import (
	"slices"
	"strings"
	"testing"
)

// planOf renames folders as a task's folder plan would: the folder map's
// "Sent Items" → "Sent", and the source's "INBOX." namespace dropped.
func planOf(folder string) (string, bool) {
	switch {
	case folder == "Sent Items":
		return "Sent", true
	case strings.HasPrefix(folder, "INBOX."):
		return strings.ReplaceAll(strings.TrimPrefix(folder, "INBOX."), ".", "/"), true
	}
	return folder, true
}

// TestRewriteFoldersTouchesOnlyFolders: the folders fileinto and
// mailboxexists name follow the plan; the same words anywhere else
// (a header test, a vacation reply, a comment, a flag) stay, byte for
// byte, as does everything around them.
func TestRewriteFoldersTouchesOnlyFolders(t *testing.T) {
	for _, c := range []struct {
		name, script, want string
		renames            []Rename
	}{
		{
			name:    "fileinto",
			script:  "require \"fileinto\";\r\nif header :contains \"subject\" \"Sent Items\" { fileinto \"Sent Items\"; }\r\n",
			want:    "require \"fileinto\";\r\nif header :contains \"subject\" \"Sent Items\" { fileinto \"Sent\"; }\r\n",
			renames: []Rename{{"Sent Items", "Sent"}},
		},
		{
			name:    "namespace and separator",
			script:  `require ["fileinto","mailbox"]; fileinto :create "INBOX.Archive.2024"; # to "INBOX.Archive"`,
			want:    `require ["fileinto","mailbox"]; fileinto :create "Archive/2024"; # to "INBOX.Archive"`,
			renames: []Rename{{"INBOX.Archive.2024", "Archive/2024"}},
		},
		{
			name:    "tags with arguments before the folder",
			script:  "require [\"fileinto\",\"imap4flags\",\"copy\"];\nfileinto :flags [\"\\\\Seen\", \"INBOX.Junk\"] :copy \"INBOX.Junk\";\n",
			want:    "require [\"fileinto\",\"imap4flags\",\"copy\"];\nfileinto :flags [\"\\\\Seen\", \"INBOX.Junk\"] :copy \"Junk\";\n",
			renames: []Rename{{"INBOX.Junk", "Junk"}},
		},
		{
			name:    "specialuse argument is not the folder",
			script:  `fileinto :specialuse "\\Sent" "Sent Items";`,
			want:    `fileinto :specialuse "\\Sent" "Sent";`,
			renames: []Rename{{"Sent Items", "Sent"}},
		},
		{
			name:    "mailboxexists list",
			script:  `if mailboxexists ["Sent Items", "INBOX"] { keep; }`,
			want:    `if mailboxexists ["Sent", "INBOX"] { keep; }`,
			renames: []Rename{{"Sent Items", "Sent"}},
		},
		{
			name:   "vacation text is not a folder",
			script: "require \"vacation\";\nvacation :days 7 text:\nI am away; fileinto \"Sent Items\";\n..and back soon\n.\n;\n",
			want:   "require \"vacation\";\nvacation :days 7 text:\nI am away; fileinto \"Sent Items\";\n..and back soon\n.\n;\n",
		},
		{
			name:   "bracket comment",
			script: "/* fileinto \"Sent Items\"; */ keep;",
			want:   "/* fileinto \"Sent Items\"; */ keep;",
		},
		{
			name:   "variables are left",
			script: `require ["fileinto","variables"]; fileinto "INBOX.${1}";`,
			want:   `require ["fileinto","variables"]; fileinto "INBOX.${1}";`,
		},
		{
			name:    "quotes in the new name are escaped",
			script:  `fileinto "INBOX.a\"b";`,
			want:    `fileinto "a\"b";`,
			renames: []Rename{{`INBOX.a"b`, `a"b`}},
		},
		{
			name:   "fileinto as a string, not a command",
			script: `if header :is "x-action" "fileinto" { keep; }`,
			want:   `if header :is "x-action" "fileinto" { keep; }`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, renames, err := RewriteFolders(c.script, planOf)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("rewritten:\n%s\nwant:\n%s", got, c.want)
			}
			if !slices.Equal(renames, c.renames) {
				t.Errorf("renames %v, want %v", renames, c.renames)
			}
		})
	}
}

// TestRewriteFoldersRefusesWhatIsNotSieve: a script that cannot be read is
// returned as it was, with the reason; nothing is guessed.
func TestRewriteFoldersRefusesWhatIsNotSieve(t *testing.T) {
	for _, script := range []string{`fileinto "Sent Items`, "/* open", "vacation text:\nno end\n", "fileinto \x01;"} {
		got, renames, err := RewriteFolders(script, planOf)
		if err == nil || got != script || renames != nil {
			t.Errorf("%q: got %q, %v, %v; want it unchanged with an error", script, got, renames, err)
		}
	}
}

// FuzzRewriteFolders: whatever the script, a rewrite that renames nothing
// returns it unchanged, and a rewrite's result reads back with the new
// names where the old ones were and every other token as it was.
func FuzzRewriteFolders(f *testing.F) {
	f.Add(`require "fileinto"; if header :contains "subject" "x" { fileinto "INBOX.Archive"; } else { keep; }`)
	f.Add("vacation text:\nhello\n..\n.\n;")
	f.Add(`fileinto :flags ["\\Seen"] :copy "Sent Items"; # c`)
	f.Add(`if mailboxexists ["a","INBOX.b"] { stop; } /* x */`)
	f.Fuzz(func(t *testing.T, script string) {
		same, renames, err := RewriteFolders(script, func(folder string) (string, bool) { return folder, true })
		if same != script || renames != nil {
			t.Fatalf("a rewrite that renames nothing changed %q into %q (%v, %v)", script, same, renames, err)
		}
		if err != nil {
			return
		}
		rewritten, renames, err := RewriteFolders(script, planOf)
		if err != nil {
			t.Fatalf("the script read once and not twice: %v", err)
		}
		before, _ := lexScript(script)
		after, err := lexScript(rewritten)
		if err != nil || len(after) != len(before) {
			t.Fatalf("%q rewritten as %q reads as %d tokens, not %d (%v)", script, rewritten, len(after), len(before), err)
		}
		renamed := 0
		for i := range before {
			if before[i].value == after[i].value {
				continue
			}
			if want, _ := planOf(before[i].value); after[i].value != want || before[i].kind != sieveString {
				t.Fatalf("token %d changed from %q to %q", i, before[i].value, after[i].value)
			}
			renamed++
		}
		if renamed != len(renames) {
			t.Fatalf("%d tokens changed, %d renames reported", renamed, len(renames))
		}
	})
}
