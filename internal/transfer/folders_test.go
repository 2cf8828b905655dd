package transfer

import (
	"regexp"
	"testing"

	"github.com/emersion/go-imap/v2"
)

var (
	slashNS = namespace{Prefix: "", Delim: '/'}
	dotNS   = namespace{Prefix: "INBOX.", Delim: '.'}
)

func TestTranslateName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		src, dst namespace
		want     string
	}{
		{"INBOX", slashNS, dotNS, "INBOX"},
		{"inbox", slashNS, dotNS, "INBOX"},
		{"Projects/2024/Q1", slashNS, dotNS, "INBOX.Projects.2024.Q1"},
		{"INBOX.Projects.2024.Q1", dotNS, slashNS, "Projects/2024/Q1"},
		{"Entwürfe/Alt", slashNS, dotNS, "INBOX.Entwürfe.Alt"},
		{"日本語", dotNS, slashNS, "日本語"},
		{"v1.2/notes", slashNS, dotNS, "INBOX.v1_2.notes"}, // a "." inside a name part would split it
		{"INBOX.a/b", dotNS, slashNS, "a_b"},               // and so would a "/"
		{"INBOX/Sub", slashNS, dotNS, "INBOX.Sub"},         // children of INBOX stay there
		{"INBOX/Sub/Deeper", slashNS, slashNS, "INBOX/Sub/Deeper"},
		{"Archive/2020", slashNS, slashNS, "Archive/2020"},
		{"Top", namespace{Delim: '.'}, dotNS, "INBOX.Top"},
	} {
		if got := translateName(tc.name, tc.src, tc.dst); got != tc.want {
			t.Errorf("translateName(%q, %q%c → %q%c) = %q, want %q", tc.name, tc.src.Prefix, tc.src.Delim, tc.dst.Prefix, tc.dst.Delim, got, tc.want)
		}
	}
}

func TestPlanFoldersMapsRolesPatternsAndNames(t *testing.T) {
	t.Parallel()
	src := []mailbox{
		{Name: "INBOX", Selectable: true},
		{Name: "Sent Items", Role: imap.MailboxAttrSent, Selectable: true, Subscribed: true},
		{Name: "Deleted Items", Role: imap.MailboxAttrTrash, Selectable: true},
		{Name: "Projects", Selectable: false},
		{Name: "Projects/2024", Selectable: true},
		{Name: "Old Stuff", Selectable: true},
		{Name: "Spam Archive", Selectable: true},
		{Name: "Notes", Role: imap.MailboxAttrArchive, Selectable: true},
	}
	dst := []mailbox{
		{Name: "INBOX"},
		{Name: "INBOX.Sent", Role: imap.MailboxAttrSent},
		{Name: "INBOX.Trash", Role: imap.MailboxAttrTrash},
	}
	opts := &Options{
		ExcludeFolders: []*regexp.Regexp{regexp.MustCompile(`^Spam`)},
		FolderMap:      map[string]string{"Old Stuff": "INBOX.Archive.Old"},
	}
	got := map[string]folderPlan{}
	for _, p := range planFolders(src, dst, slashNS, dotNS, opts) {
		got[p.Source.Name] = p
	}
	want := map[string]struct {
		dest   string
		create bool
	}{
		"INBOX":         {"INBOX", false},
		"Sent Items":    {"INBOX.Sent", false},
		"Deleted Items": {"INBOX.Trash", false},
		"Projects/2024": {"INBOX.Projects.2024", true},
		"Old Stuff":     {"INBOX.Archive.Old", true},
		"Notes":         {"INBOX.Notes", true}, // a role the destination lacks keeps its name
	}
	if len(got) != len(want) {
		t.Errorf("planned %d folders, want %d: %+v", len(got), len(want), got)
	}
	for name, w := range want {
		p, ok := got[name]
		if !ok || p.Destination != w.dest || p.Create != w.create {
			t.Errorf("%s → %+v, want %s (create %v)", name, p, w.dest, w.create)
		}
	}
	if !got["Sent Items"].Source.Subscribed {
		t.Error("the subscription of Sent Items was lost")
	}
}

func TestIncludePatternsSelectFolders(t *testing.T) {
	t.Parallel()
	opts := &Options{IncludeFolders: []*regexp.Regexp{regexp.MustCompile(`^INBOX$`), regexp.MustCompile(`^Work/`)}}
	for name, want := range map[string]bool{"INBOX": true, "Work/A": true, "Work": false, "Private": false} {
		if opts.wants(name) != want {
			t.Errorf("wants(%q) = %v, want %v", name, !want, want)
		}
	}
}

func TestGuessRolesOfServersWithoutSpecialUse(t *testing.T) {
	t.Parallel()
	boxes := []mailbox{{Name: "INBOX.Sent"}, {Name: "INBOX.Sent Messages"}, {Name: "INBOX.Trash"}, {Name: "INBOX.Work.Sent"}, {Name: "INBOX.Spam"}}
	guessRoles(boxes, dotNS)
	want := []imap.MailboxAttr{imap.MailboxAttrSent, "", imap.MailboxAttrTrash, "", imap.MailboxAttrJunk}
	for i, b := range boxes {
		if b.Role != want[i] {
			t.Errorf("%s: role %q, want %q", b.Name, b.Role, want[i])
		}
	}
	// An announced role is never guessed onto another folder.
	announced := []mailbox{{Name: "Sent"}, {Name: "Outbox", Role: imap.MailboxAttrSent}}
	guessRoles(announced, slashNS)
	if announced[0].Role != "" {
		t.Error("guessed \\Sent for a folder while the server names another")
	}
}
