package imaptest

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

func TestLoadReadsBackExactly(t *testing.T) {
	t.Parallel()
	corpus := BuildCorpus(CorpusOptions{Seed: 42, Messages: 80, LargeMessages: 2, LargeSize: 300 << 10})
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			t.Parallel()
			d := StartDovecot(t, Options{Layout: layout, Users: map[string]string{"alice": "secret"}})
			start := time.Now()
			d.Load(t, "alice", corpus)
			t.Logf("loaded %d messages in %v", len(corpus.Messages), time.Since(start))
			checkMailboxNames(t, d, corpus)
			got := d.Read(t, "alice")
			for _, diff := range Diff(corpus, got) {
				t.Error(diff)
			}
			checkOrder(t, corpus, got)
		})
	}
}

// checkMailboxNames checks the names on the wire: the layout's, with
// non-ASCII names in modified UTF-7 (RFC 3501 §5.1.3).
func checkMailboxNames(t *testing.T, d *Dovecot, c Corpus) {
	t.Helper()
	var wire bytes.Buffer
	client, err := imapclient.DialInsecure(d.Addr(), &imapclient.Options{DebugWriter: &wire})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Login("alice", "secret").Wait(); err != nil {
		t.Fatal(err)
	}
	list, err := client.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range list {
		names = append(names, l.Mailbox)
	}
	for _, f := range c.Folders {
		if name := d.Layout.MailboxName(f.Name); !slices.Contains(names, name) {
			t.Errorf("LIST has no %q (%s) in %q", name, f.Name, names)
		}
	}
	for _, encoded := range []string{"Entw&APw-rfe", "&ZeVnLIqe-", "Reports &- Invoices"} {
		if !strings.Contains(wire.String(), encoded) {
			t.Errorf("no %q on the wire", encoded)
		}
	}
	if strings.Contains(wire.String(), "日本語") {
		t.Error("raw UTF-8 mailbox name on the wire")
	}
}

// checkOrder checks that each folder's UIDs follow the corpus order.
func checkOrder(t *testing.T, want, got Corpus) {
	t.Helper()
	for _, f := range want.Folders {
		w, g := want.InFolder(f.Name), got.InFolder(f.Name)
		if len(w) != len(g) {
			continue // reported by Diff
		}
		for i := range w {
			if !bytes.Equal(w[i].Body, g[i].Body) || !w[i].Date.Equal(g[i].Date) {
				t.Errorf("%s: message %d out of order", f.Name, i)
				break
			}
		}
	}
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	d := StartDovecot(t, Options{Users: map[string]string{"alice": "secret"}})
	if snap := d.Snapshot(t, "alice"); len(snap) != 0 {
		t.Fatalf("snapshot of a new user: %v", snap)
	}
	corpus := BuildCorpus(CorpusOptions{Seed: 3, Messages: 40})
	d.Load(t, "alice", corpus)
	before := d.Snapshot(t, "alice")
	if len(before) != len(corpus.Messages) {
		t.Fatalf("snapshot has %d messages, corpus %d", len(before), len(corpus.Messages))
	}
	for key, value := range before {
		if strings.Contains(key, ":2,") || !strings.Contains(value, " ") {
			t.Fatalf("entry %q = %q", key, value)
		}
	}

	// Reading it all read-only, as a migration does, changes nothing.
	d.Read(t, "alice")
	if diff := diffSnapshots(before, d.Snapshot(t, "alice")); diff != "" {
		t.Fatalf("EXAMINE and BODY.PEEK[] changed the store: %s", diff)
	}

	// A SELECT takes new messages out of new/: that shows.
	c := d.Login(t, "alice", "secret")
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	selected := d.Snapshot(t, "alice")
	if diffSnapshots(before, selected) == "" {
		t.Error("SELECT of INBOX with unflagged messages changed nothing")
	}
	if !slices.Equal(slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(selected))) {
		t.Error("SELECT changed message identities")
	}

	// A stored flag shows.
	if err := c.Store(imap.UIDSetNum(1), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagFlagged}}, nil).Close(); err != nil {
		t.Fatal(err)
	}
	if diff := diffSnapshots(selected, d.Snapshot(t, "alice")); strings.Count(diff, "\n") != 1 {
		t.Errorf("STORE +FLAGS \\Flagged on one message: diff %q, want one entry", diff)
	}

	// So does \Seen set by a FETCH BODY[] without PEEK.
	flagged := d.Snapshot(t, "alice")
	if _, err := c.Fetch(imap.SeqSetNum(1, 2, 3, 4), &imap.FetchOptions{
		BodySection: []*imap.FetchItemBodySection{{}},
	}).Collect(); err != nil {
		t.Fatal(err)
	}
	if diffSnapshots(flagged, d.Snapshot(t, "alice")) == "" {
		t.Error("FETCH BODY[] (setting \\Seen) changed nothing")
	}
}

// diffSnapshots lists the entries that differ, one a line.
func diffSnapshots(a, b map[string]string) string {
	var diff strings.Builder
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if b[k] != a[k] {
			diff.WriteString(k + ": " + a[k] + " → " + b[k] + "\n")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			diff.WriteString(k + ": added " + b[k] + "\n")
		}
	}
	return diff.String()
}
