package transfer

import (
	"maps"
	"regexp"
	"slices"
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
		{Name: "Memos", Selectable: true},
	}
	dst := []mailbox{
		{Name: "INBOX"},
		{Name: "INBOX.Sent", Role: imap.MailboxAttrSent},
		{Name: "INBOX.Trash", Role: imap.MailboxAttrTrash},
	}
	opts := &Options{
		ExcludeFolders: []*regexp.Regexp{regexp.MustCompile(`^Spam`)},
		// A mapped name outside the destination's personal namespace is
		// put into it: "INBOX." servers refuse a top-level "Memos 2024".
		FolderMap: map[string]string{"Old Stuff": "INBOX.Archive.Old", "Memos": "Memos 2024"},
	}
	got := map[string]folderPlan{}
	for _, p := range planFolders(src, dst, slashNS, dotNS, opts, nil, nil) {
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
		"Memos":         {"INBOX.Memos 2024", true},
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

// Case 6 of the re-run cases: two source folders never land in one
// destination folder, whatever order the server lists them in, and a
// re-run keeps every folder where the first run put it.
func TestPlanFoldersNeverMerges(t *testing.T) {
	t.Parallel()
	src := []mailbox{
		{Name: "INBOX", Selectable: true}, {Name: "a.b", Selectable: true}, {Name: "a_b", Selectable: true},
		{Name: "INBOX/foo", Selectable: true}, {Name: "foo", Selectable: true},
	}
	want := map[string]string{
		"INBOX": "INBOX", "a_b": "INBOX.a_b", "a.b": "INBOX.a_b (2)",
		"foo": "INBOX.foo", "INBOX/foo": "INBOX.foo (2)", // "foo" keeps its name; "INBOX/foo" would lose its parent
	}
	for _, order := range [][]mailbox{src, reversed(src)} {
		got := destinations(planFolders(order, []mailbox{{Name: "INBOX"}}, slashNS, dotNS, &Options{}, nil, nil))
		if !maps.Equal(got, want) {
			t.Errorf("plan %v, want %v", got, want)
		}
	}
	// The destination of a previous run holds, even where the names would
	// now be handed out otherwise.
	previous := map[string]string{"INBOX/foo": "INBOX.foo", "foo": "INBOX.foo (2)"}
	got := destinations(planFolders(src, []mailbox{{Name: "INBOX"}, {Name: "INBOX.foo"}, {Name: "INBOX.foo (2)"}}, slashNS, dotNS, &Options{}, previous, nil))
	if got["INBOX/foo"] != "INBOX.foo" || got["foo"] != "INBOX.foo (2)" {
		t.Errorf("with the previous plan: %v", got)
	}
	// Only the folder map may merge folders.
	opts := &Options{FolderMap: map[string]string{"a.b": "INBOX.a_b", "a_b": "INBOX.a_b"}}
	if got := destinations(planFolders(src, nil, slashNS, dotNS, opts, nil, nil)); got["a.b"] != got["a_b"] {
		t.Errorf("the folder map was not followed: %v", got)
	}
}

// Case 6 on a server without SPECIAL-USE (Courier): Drafts and Entwürfe
// stay two folders both ways, in either listing order.
func TestRoleGuessesNeverMergeFolders(t *testing.T) {
	t.Parallel()
	courier := []mailbox{{Name: "INBOX", Selectable: true}, {Name: "INBOX.Drafts", Selectable: true}, {Name: "INBOX.Entwürfe", Selectable: true}}
	dovecot := []mailbox{{Name: "INBOX", Selectable: true}, {Name: "Drafts", Role: imap.MailboxAttrDrafts, Selectable: true}, {Name: "Entwürfe", Selectable: true}}
	for _, order := range [][]mailbox{courier, reversed(courier)} {
		boxes := slices.Clone(order)
		guessRoles(boxes, dotNS)
		roles := map[string]imap.MailboxAttr{}
		for _, b := range boxes {
			roles[b.Name] = b.Role
		}
		if roles["INBOX.Drafts"] != imap.MailboxAttrDrafts || roles["INBOX.Entwürfe"] != "" {
			t.Errorf("guessed roles %v: the English name must win", roles)
		}
		toDovecot := destinations(planFolders(boxes, dovecot, dotNS, slashNS, &Options{}, nil, nil))
		if toDovecot["INBOX.Drafts"] != "Drafts" || toDovecot["INBOX.Entwürfe"] != "Entwürfe" {
			t.Errorf("Courier → Dovecot: %v", toDovecot)
		}
		toCourier := destinations(planFolders(dovecot, boxes, slashNS, dotNS, &Options{}, nil, nil))
		if toCourier["Drafts"] != "INBOX.Drafts" || toCourier["Entwürfe"] != "INBOX.Entwürfe" {
			t.Errorf("Dovecot → Courier: %v", toCourier)
		}
	}
	tie := []mailbox{{Name: "Sent Messages"}, {Name: "Sent Items"}}
	guessRoles(tie, slashNS)
	if tie[0].Role != "" || tie[1].Role != "" {
		t.Errorf("two equally good candidates for \\Sent: %+v; neither may get the role", tie)
	}
}

func destinations(plans []folderPlan) map[string]string {
	out := map[string]string{}
	for _, p := range plans {
		out[p.Source.Name] = p.Destination
	}
	return out
}

func reversed(boxes []mailbox) []mailbox {
	out := slices.Clone(boxes)
	slices.Reverse(out)
	return out
}
