package transfer

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// gmailMessages are the labels of a Gmail mailbox that has every case a
// policy meets: inbox mail with and without user labels, sent mail with a
// label, a draft, starred and important mail, a nested label, archived
// mail, spam and trash.
var gmailMessages = [][]string{
	{`\Inbox`},                           // 0
	{`\Inbox`, "Work"},                   // 1
	{"Work", "Clients/Acme"},             // 2
	{},                                   // 3: archived
	{`\Sent`},                            // 4
	{`\Sent`, "Work"},                    // 5
	{`\Draft`},                           // 6
	{`\Inbox`, `\Starred`, `\Important`}, // 7
	{`\Spam`},                            // 8
	{`\Trash`},                           // 9
	{"Clients/Acme", `\Important`},       // 10
	{`\Starred`},                         // 11: archived, starred
}

func gmailRaw(n int) []byte {
	return []byte(fmt.Sprintf("From: a@example.com\r\nTo: b@example.com\r\nSubject: message %d\r\n"+
		"Message-ID: <m%d@gmail.test>\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n\r\nBody %d.\r\n", n, n, n))
}

// gmailFixture is the Gmail fake with gmailMessages, and a Dovecot to
// migrate to.
type gmailFixture struct {
	gmail *imaptest.GmailServer
	dst   *imaptest.Dovecot
}

func newGmailFixture(t *testing.T, opts imaptest.GmailOptions) *gmailFixture {
	t.Helper()
	opts.Login, opts.Password = "ann@example.com", "app-password"
	f := &gmailFixture{gmail: imaptest.StartGmail(t, opts),
		dst: imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"ann": "pw"}})}
	for i, labels := range gmailMessages {
		f.gmail.Add(t, imaptest.GmailMessage{Raw: gmailRaw(i), Labels: labels, Date: time.Date(2026, 11, 2, 10, i, 0, 0, time.UTC)})
	}
	return f
}

func (f *gmailFixture) job(policy GmailLabels) Job {
	return Job{
		Source:      imapconn.Side{Server: imapconn.Server{Host: f.gmail.Host, Port: f.gmail.Port, Security: imapconn.SecurityPlain}, Login: f.gmail.Login, Password: f.gmail.Password},
		Destination: imapconn.Side{Server: imapconn.Server{Host: f.dst.Host, Port: f.dst.Port, Security: imapconn.SecurityPlain}, Login: "ann", Password: "pw"},
		Options:     Options{GmailLabels: policy},
		State:       syncstate.NewMemoryState(),
		Tuning:      Tuning{Tries: 1},
	}
}

var messageNumber = regexp.MustCompile(`Message-ID: <m(\d+)@gmail\.test>`)

// destination returns where each message is on the destination: folder
// → the message numbers there, each with its keywords ("2 Clients/Acme
// Work"), sorted.
func (f *gmailFixture) destination(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range f.dst.Read(t, "ann").Messages {
		n := messageNumber.FindSubmatch(m.Body)
		if n == nil {
			t.Fatalf("a message on the destination that the source does not have: %q", m.Body)
		}
		entry := string(n[1])
		var keywords []string
		for _, flag := range m.Flags {
			if !strings.HasPrefix(string(flag), `\`) {
				keywords = append(keywords, string(flag))
			}
		}
		slices.Sort(keywords)
		if len(keywords) > 0 {
			entry += " " + strings.Join(keywords, " ")
		}
		out[m.Folder] = append(out[m.Folder], entry)
	}
	for folder := range out {
		slices.SortFunc(out[folder], func(a, b string) int {
			var x, y int
			fmt.Sscan(a, &x)
			fmt.Sscan(b, &y)
			return x - y
		})
	}
	return out
}

func wantPlaces(t *testing.T, got, want map[string][]string) {
	t.Helper()
	for folder, msgs := range want {
		if !slices.Equal(got[folder], msgs) {
			t.Errorf("%s holds %q, want %q", folder, got[folder], msgs)
		}
	}
	for folder, msgs := range got {
		if _, ok := want[folder]; !ok && len(msgs) > 0 {
			t.Errorf("%s holds %q, want nothing there", folder, msgs)
		}
	}
}

// wantGmailVerified checks that every folder of res is verified and none is
// Gmail's All Mail, Starred or Important copied as it is.
func wantGmailVerified(t *testing.T, res Result, messages int) {
	t.Helper()
	total := 0
	for _, folder := range res.Folders {
		if !folder.Verified() {
			t.Errorf("%s → %s not verified: %+v", folder.Source, folder.Destination, folder)
		}
		if strings.Contains(folder.Destination, "All Mail") || strings.Contains(folder.Destination, "Starred") || strings.Contains(folder.Destination, "Important") {
			t.Errorf("a view was copied as a folder: %s → %s", folder.Source, folder.Destination)
		}
		total += folder.SourceMessages
	}
	if total != messages {
		t.Errorf("the folders cover %d messages, want %d", total, messages)
	}
	if int(res.SourceMessages) != messages || int(res.MessagesCopied)+int(res.MessagesSkipped) != messages || int(res.MessagesFailed) != 0 {
		t.Errorf("progress: %d source messages, %d copied, %d skipped, %d failed; want %d in all",
			res.SourceMessages, res.MessagesCopied, res.MessagesSkipped, res.MessagesFailed, messages)
	}
}

// TestGmailFirstLabelCopiesEachMessageOnce: leaving Gmail with the
// first-label policy, each message is copied once, to Drafts, INBOX, its
// first user label, Sent or Archive in that order; Spam and Trash as
// they are. A re-run after labels were added copies only the new
// message: a message stays where it went.
func TestGmailFirstLabelCopiesEachMessageOnce(t *testing.T) {
	f := newGmailFixture(t, imaptest.GmailOptions{})
	job := f.job(GmailFirstLabel)
	// The task's total before any run counts each message once too.
	count, counted, err := CheckLoginAndCount(context.Background(), job.Source, job.Tuning, job.Options)
	if err != nil || !counted || count.Messages != len(gmailMessages) {
		t.Errorf("counted %+v (%t, %v) before the run, want %d messages", count, counted, err, len(gmailMessages))
	}
	res, err := Migrate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	wantGmailVerified(t, res, len(gmailMessages))
	want := map[string][]string{
		"INBOX":        {"0", "1", "7"},
		"Work":         {"2", "5"},
		"Clients/Acme": {"10"},
		`\Sent`:        {"4"},
		`\Drafts`:      {"6"},
		`\Junk`:        {"8"},
		`\Trash`:       {"9"},
		`\Archive`:     {"3", "11"},
	}
	wantPlaces(t, f.destination(t), want)
	if int(res.MessagesCopied) != len(gmailMessages) {
		t.Errorf("copied %d messages, want %d", res.MessagesCopied, len(gmailMessages))
	}

	// The user labels an inbox message and an archived one, and a new
	// message arrives.
	f.gmail.AddLabel(t, 0, "Alpha", gmailRaw(0))
	f.gmail.AddLabel(t, 3, "Alpha", gmailRaw(3))
	f.gmail.Add(t, imaptest.GmailMessage{Raw: gmailRaw(12), Labels: []string{"Alpha"}, Date: time.Now()})
	res, err = Migrate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if res.MessagesCopied != 1 {
		t.Errorf("the re-run copied %d messages, want 1 (the new one)", res.MessagesCopied)
	}
	wantGmailVerified(t, res, len(gmailMessages)+1)
	want["Alpha"] = []string{"12"}
	wantPlaces(t, f.destination(t), want)

	// Another policy later copies nothing again either: what went to
	// label folders it does not read into (Work, Alpha) is there.
	job.Options.GmailLabels = GmailKeywords
	if res, err = Migrate(context.Background(), job); err != nil || res.MessagesCopied != 0 {
		t.Fatalf("a re-run under keywords copied %d messages (%v), want none", res.MessagesCopied, err)
	}
	n := 0
	for _, msgs := range f.destination(t) {
		n += len(msgs)
	}
	if n != len(gmailMessages)+1 {
		t.Errorf("%d messages on the destination after the switch, want %d", n, len(gmailMessages)+1)
	}
}

// TestGmailKeywordsKeepLabelsAsKeywords: with the keywords policy each
// message is copied once, to Drafts, INBOX, Sent or Archive, its user
// labels as keywords and Important as $Important; a label added later
// is added to the copy's keywords, nothing is copied again.
func TestGmailKeywordsKeepLabelsAsKeywords(t *testing.T) {
	f := newGmailFixture(t, imaptest.GmailOptions{})
	job := f.job(GmailKeywords)
	res, err := Migrate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	wantGmailVerified(t, res, len(gmailMessages))
	want := map[string][]string{
		"INBOX":    {"0", "1 Work", "7 $Important"},
		`\Sent`:    {"4", "5 Work"},
		`\Drafts`:  {"6"},
		`\Junk`:    {"8"},
		`\Trash`:   {"9"},
		`\Archive`: {"2 Clients/Acme Work", "3", "10 $Important Clients/Acme", "11"},
	}
	wantPlaces(t, f.destination(t), want)

	f.gmail.AddLabel(t, 0, "Later Label", gmailRaw(0))
	res, err = Migrate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if res.MessagesCopied != 0 {
		t.Errorf("the re-run copied %d messages, want none", res.MessagesCopied)
	}
	want["INBOX"][0] = "0 Later_Label"
	wantPlaces(t, f.destination(t), want)
}

// TestGmailFoldersCopiesLabelsButNotAllMail: the folders policy copies a
// message once per label folder, as any server's folders, but All Mail,
// Starred and Important are not copied: the archived mail alone comes
// from All Mail, to Archive.
func TestGmailFoldersCopiesLabelsButNotAllMail(t *testing.T) {
	f := newGmailFixture(t, imaptest.GmailOptions{})
	res, err := Migrate(context.Background(), f.job(GmailFolders))
	if err != nil {
		t.Fatal(err)
	}
	wantGmailVerified(t, res, 15)
	wantPlaces(t, f.destination(t), map[string][]string{
		"INBOX":        {"0", "1", "7"},
		"Work":         {"1", "2", "5"},
		"Clients/Acme": {"2", "10"},
		`\Sent`:        {"4", "5"},
		`\Drafts`:      {"6"},
		`\Junk`:        {"8"},
		`\Trash`:       {"9"},
		`\Archive`:     {"3", "11"},
	})
}

// TestGmailBandwidthLimitPausesTheAccount: Gmail's "Account exceeded
// command or bandwidth limits" is a throttle: the account pauses and
// goes on where it was, and every message is there once.
func TestGmailBandwidthLimitPausesTheAccount(t *testing.T) {
	f := newGmailFixture(t, imaptest.GmailOptions{BandwidthFetches: 3, BandwidthLock: 300 * time.Millisecond})
	job := f.job(GmailFirstLabel)
	job.Tuning.ThrottlePause = 100 * time.Millisecond
	var throttles []Throttle
	job.OnThrottled = func(th Throttle) { throttles = append(throttles, th) }
	res, err := Migrate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	wantGmailVerified(t, res, len(gmailMessages))
	if len(throttles) == 0 || f.gmail.Refused() == 0 {
		t.Fatalf("no throttle seen (%d refused)", f.gmail.Refused())
	}
	if !strings.Contains(throttles[0].Words, "bandwidth limits") || throttles[0].Side != "source" {
		t.Errorf("throttle %+v, want the source's words", throttles[0])
	}
	got := f.destination(t)
	n := 0
	for _, msgs := range got {
		n += len(msgs)
	}
	if n != len(gmailMessages) {
		t.Errorf("%d messages on the destination, want %d: %v", n, len(gmailMessages), got)
	}
}

// TestParseLabelFetch reads X-GM-LABELS as Gmail writes them: system
// labels quoted with their backslash escaped or bare, labels with spaces
// quoted, modified UTF-7, other items in between, and a list empty for
// archived mail.
func TestParseLabelFetch(t *testing.T) {
	for _, c := range []struct {
		response string
		want     labelled
		ok       bool
	}{
		{`12 FETCH (X-GM-LABELS ("\\Inbox" "\\Important" Work "Muy Importante") UID 40 RFC822.SIZE 1234)`,
			labelled{uid: 40, size: 1234, labels: []string{`\Inbox`, `\Important`, "Work", "Muy Importante"}}, true},
		{`1 FETCH (UID 7 FLAGS (\Seen) RFC822.SIZE 10 X-GM-MSGID 1278455344230334865 X-GM-LABELS (\Sent Caf&AOk-))`,
			labelled{uid: 7, size: 10, labels: []string{`\Sent`, "Café"}}, true},
		{`3 FETCH (UID 9 RFC822.SIZE 5 X-GM-LABELS ())`, labelled{uid: 9, size: 5, labels: nil}, true},
		{`3 FETCH (FLAGS (\Seen))`, labelled{}, false}, // a flag change
		{`4 EXISTS`, labelled{}, false},
	} {
		got, ok, err := parseLabelFetch(c.response)
		if err != nil || ok != c.ok || (ok && (got.uid != c.want.uid || got.size != c.want.size || !slices.Equal(got.labels, c.want.labels))) {
			t.Errorf("%s: got %+v %t %v, want %+v", c.response, got, ok, err, c.want)
		}
	}
	if _, _, err := parseLabelFetch(`5 FETCH (UID 3 X-GM-LABELS ("unterminated`); err == nil {
		t.Error("a malformed list was read without an error")
	}
	for label, want := range map[string]string{"Work": "Work", "Clients/Acme": "Clients/Acme", "Later Label": "Later_Label",
		"Café (old)": "Caf&AOk-__old_", `a"b\c%d*e]`: "a_b_c_d_e_"} {
		if got := labelKeyword(label); string(got) != want {
			t.Errorf("label %q became keyword %q, want %q", label, got, want)
		}
	}
}

// TestJoiningGmailLabelsInsteadOfCopies: into Gmail, a message that two
// source folders hold becomes one message with two labels: the second
// folder gets the first copy by a COPY from All Mail, never a second
// message. A re-run adds nothing; a later folder holding an old message
// labels it too.
func TestJoiningGmailLabelsInsteadOfCopies(t *testing.T) {
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"ann": "pw"}})
	date := time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)
	msg := func(folder string, n int) imaptest.Message {
		return imaptest.Message{Folder: folder, Body: gmailRaw(n), Date: date.Add(time.Duration(n) * time.Minute), Flags: []imap.Flag{imap.FlagSeen}}
	}
	src.Load(t, "ann", imaptest.Corpus{Folders: []imaptest.Folder{{Name: "Work"}},
		Messages: []imaptest.Message{msg("INBOX", 0), msg("INBOX", 1), msg("Work", 0), msg("Work", 2), msg(`\Sent`, 3), msg(`\Junk`, 1)}})
	gmail := imaptest.StartGmail(t, imaptest.GmailOptions{Login: "ann@example.com", Password: "app-password"})
	job := Job{
		Source:      imapconn.Side{Server: imapconn.Server{Host: src.Host, Port: src.Port, Security: imapconn.SecurityPlain}, Login: "ann", Password: "pw"},
		Destination: imapconn.Side{Server: imapconn.Server{Host: gmail.Host, Port: gmail.Port, Security: imapconn.SecurityPlain}, Login: gmail.Login, Password: gmail.Password},
		State:       syncstate.NewMemoryState(),
		Tuning:      Tuning{Tries: 1},
	}
	wantCounts := func(when string, want map[string]int) {
		t.Helper()
		for folder, n := range want {
			if got := gmail.Count(folder); got != n {
				t.Errorf("%s: %s holds %d messages, want %d", when, folder, got, n)
			}
		}
	}
	res, err := Migrate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	for _, folder := range res.Folders {
		if !folder.Verified() {
			t.Errorf("%s → %s not verified: %+v", folder.Source, folder.Destination, folder)
		}
	}
	// The twin in Junk (copied after INBOX) is a message of its own: a
	// COPY into Gmail's Spam would take INBOX's from it.
	wantCounts("first run", map[string]int{imaptest.GmailAllMail: 4, "INBOX": 2, "Work": 2, "[Gmail]/Sent Mail": 1, "[Gmail]/Spam": 1})
	if labels := gmail.Labels(imaptest.GmailAllMail)[0]; !slices.Equal(labels, []string{`\Inbox`, "Work"}) {
		t.Errorf("the message in INBOX and Work has labels %q, want both", labels)
	}
	if labels := gmail.Labels(imaptest.GmailAllMail)[1]; !slices.Equal(labels, []string{`\Inbox`}) {
		t.Errorf("the message in INBOX and Junk has labels %q in All Mail, want INBOX's alone", labels)
	}

	res, err = Migrate(context.Background(), job)
	if err != nil || res.MessagesCopied != 0 {
		t.Fatalf("the re-run copied %d messages (%v), want none", res.MessagesCopied, err)
	}
	wantCounts("re-run", map[string]int{imaptest.GmailAllMail: 4})

	// A new folder holds an old message; INBOX gets a new one, and a
	// second copy of one it has: that is a message of its own, not the
	// label INBOX's copy has already.
	src.Load(t, "ann", imaptest.Corpus{Folders: []imaptest.Folder{{Name: "Later"}},
		Messages: []imaptest.Message{msg("Later", 1), msg("INBOX", 4), msg("INBOX", 0)}})
	if _, err := Migrate(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	wantCounts("after a new folder", map[string]int{imaptest.GmailAllMail: 6, "INBOX": 4, "Later": 1})
	if labels := gmail.Labels(imaptest.GmailAllMail)[1]; !slices.Equal(labels, []string{`\Inbox`, "Later"}) {
		t.Errorf("the old message put in Later has labels %q, want INBOX's and Later", labels)
	}
}

// TestPlanOfAGmailSourceCountsWhatEachFolderGets: a plan of a Gmail
// source counts, under each policy, what each folder will get (the
// folders read from All Mail too), as the run that follows counts and
// copies it; a message there that the destination would refuse is found.
func TestPlanOfAGmailSourceCountsWhatEachFolderGets(t *testing.T) {
	for _, policy := range []GmailLabels{GmailFirstLabel, GmailKeywords, GmailFolders} {
		t.Run(string(policy), func(t *testing.T) {
			f := newGmailFixture(t, imaptest.GmailOptions{})
			// An archived message larger than the destination takes.
			big := append(gmailRaw(12), []byte(strings.Repeat("x", 4_000))...)
			f.gmail.Add(t, imaptest.GmailMessage{Raw: big, Date: time.Date(2026, 11, 2, 11, 0, 0, 0, time.UTC)})
			job := f.job(policy)
			job.Destination.Limits.MaxMessageBytes = 2_000
			plan, err := Plan(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			planned := map[string]int{}
			oversize := 0
			for _, folder := range plan.Folders {
				planned[folder.Source] = folder.SourceMessages
				oversize += folder.OversizeMessages
			}
			if oversize != 1 || len(plan.Oversize) != 1 || plan.Oversize[0].Size < 4_000 {
				t.Errorf("oversize: %d in the folders, listed %+v; want the archived message", oversize, plan.Oversize)
			}

			job.Destination.Limits.MaxMessageBytes = 0 // the run copies them all, to count them
			res, err := Migrate(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if int(plan.SourceMessages) != int(res.SourceMessages) || plan.SourceBytes != res.SourceBytes || plan.ToCopyBytes != res.SourceBytes {
				t.Errorf("the plan counted %d messages, %d bytes (%d to copy); the run %d messages, %d bytes",
					plan.SourceMessages, plan.SourceBytes, plan.ToCopyBytes, res.SourceMessages, res.SourceBytes)
			}
			for _, folder := range res.Folders {
				if planned[folder.Source] != folder.SourceMessages {
					t.Errorf("%s: the plan counted %d messages, the run %d", folder.Source, planned[folder.Source], folder.SourceMessages)
				}
			}
			// After the run, a plan finds the same and nothing left to copy.
			again, err := Plan(context.Background(), job)
			if err != nil || again.SourceMessages != plan.SourceMessages || again.ToCopyBytes != 0 {
				t.Errorf("the plan after the run: %d messages, %d bytes to copy (%v); want %d, none",
					again.SourceMessages, again.ToCopyBytes, err, plan.SourceMessages)
			}
		})
	}
}
