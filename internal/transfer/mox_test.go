package transfer

import (
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// The mox tests run the migrations of the Dovecot tests between a Dovecot
// and a mox (github.com/mjl-/mox), both ways: a server of another design,
// which names INBOX "Inbox", keeps keywords in lower case, subscribes
// every folder it creates and flags $Junk what is put into its Junk
// folder (see imaptest.Mox).

// testAccount is one user's mailbox on a test server, Dovecot or mox.
type testAccount struct {
	server imaptest.Server
	side   imapconn.Side
	// stored is what the server holds once a corpus is put into it:
	// imaptest.MoxStored for a mox, the corpus itself for a Dovecot.
	stored func(imaptest.Corpus) imaptest.Corpus
}

func (a testAccount) load(t testing.TB, c imaptest.Corpus) {
	t.Helper()
	a.server.Load(t, a.side.Login, c)
}

func (a testAccount) read(t testing.TB) imaptest.Corpus {
	t.Helper()
	return a.server.Read(t, a.side.Login)
}

func (a testAccount) login(t testing.TB) *imapclient.Client {
	t.Helper()
	return a.server.Login(t, a.side.Login, a.side.Password)
}

// dovecotAccount returns a maker of an account on a new Dovecot of layout.
func dovecotAccount(layout imaptest.Layout) func(testing.TB) testAccount {
	return func(t testing.TB) testAccount {
		t.Helper()
		d := imaptest.StartDovecot(t, imaptest.Options{Layout: layout, Users: map[string]string{"alice": "dovecot-pw"}})
		return testAccount{server: d, side: dovecotSide(d, "alice", "dovecot-pw"),
			stored: func(c imaptest.Corpus) imaptest.Corpus { return c }}
	}
}

// moxAccount returns an account on a new mox, which logs in by address.
func moxAccount(t testing.TB) testAccount {
	t.Helper()
	m := imaptest.StartMox(t, imaptest.MoxOptions{Users: map[string]string{"alice@mox.test": "mox-password"}})
	side := imapconn.Side{Server: imapconn.Server{Host: m.Host, Port: m.Port, Security: imapconn.SecurityPlain}, Login: "alice@mox.test", Password: "mox-password"}
	return testAccount{server: m, side: side, stored: imaptest.MoxStored}
}

// mixedPair migrates between a Dovecot and a mox.
type mixedPair struct {
	src, dst testAccount
	job      Job
}

// eachMoxDirection runs test in parallel subtests: from a Dovecot with
// delimiter "." and prefix "INBOX." to a mox, and from a mox to a
// Dovecot with Outlook's names for the special-use folders.
func eachMoxDirection(t *testing.T, test func(t *testing.T, p *mixedPair)) {
	t.Helper()
	for _, dir := range []struct {
		name     string
		src, dst func(testing.TB) testAccount
	}{
		{"Dovecot to mox", dovecotAccount(imaptest.LayoutDotInbox), moxAccount},
		{"mox to Dovecot", moxAccount, dovecotAccount(imaptest.LayoutSlash)},
	} {
		t.Run(dir.name, func(t *testing.T) {
			t.Parallel()
			p := &mixedPair{src: dir.src(t), dst: dir.dst(t)}
			p.job = Job{Source: p.src.side, Destination: p.dst.side, State: syncstate.NewMemoryState()}
			test(t, p)
		})
	}
}

// run migrates once, with the state of the runs before, and fails t
// unless every folder is verified.
func (p *mixedPair) run(t *testing.T) Result {
	t.Helper()
	return migrateVerified(t, p.job)
}

// wantExact fails t unless the destination holds the source's mail, as
// the destination server stores it.
func (p *mixedPair) wantExact(t *testing.T) {
	t.Helper()
	wantSameMail(t, p.dst.stored(p.src.read(t)), p.dst.read(t))
}

// Nested, non-ASCII and special-use folders, every flag and keyword,
// messages without Message-ID and exact duplicates arrive exactly; a
// second run copies nothing and changes nothing.
func TestMigrationWithMoxIsExact(t *testing.T) {
	t.Parallel()
	eachMoxDirection(t, func(t *testing.T, p *mixedPair) {
		corpus := imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 11, Messages: 120, LargeMessages: 1, LargeSize: 512 << 10})
		p.src.load(t, corpus)
		start := time.Now()
		if first := p.run(t); int(first.MessagesCopied) != len(corpus.Messages) {
			t.Errorf("copied %d messages, the corpus has %d", first.MessagesCopied, len(corpus.Messages))
		}
		t.Logf("first run: %d messages in %v", len(corpus.Messages), time.Since(start))
		p.wantExact(t)
		if second := p.run(t); second.MessagesCopied != 0 || second.MessagesTotal != 0 {
			t.Errorf("second run: %+v", second.Progress)
		}
		p.wantExact(t)
	})
}

// A flag change on the source reaches the destination on the next run,
// keywords too, without a copy.
func TestMoxSourceFlagChangesReachTheDestination(t *testing.T) {
	t.Parallel()
	eachMoxDirection(t, func(t *testing.T, p *mixedPair) {
		msgs := numbered(12)
		for i := range msgs {
			if i%2 == 0 {
				msgs[i].Flags = []imap.Flag{imap.FlagFlagged}
			}
		}
		p.src.load(t, imaptest.Corpus{Messages: msgs})
		p.run(t)
		c := p.src.login(t)
		storeFlags(t, c, "INBOX", imap.StoreFlagsAdd, imap.FlagSeen, imap.FlagAnswered, "$Forwarded", "Work")
		storeFlags(t, c, "INBOX", imap.StoreFlagsDel, imap.FlagFlagged)
		for range 2 {
			if res := p.run(t); res.MessagesCopied != 0 {
				t.Errorf("a flag change copied %d messages", res.MessagesCopied)
			}
			p.wantExact(t)
		}
	})
}

// A message identical to one copied before arrives on the source: it is
// a message of its own and is copied.
func TestMoxIdenticalMessageArrivingBetweenRunsIsCopied(t *testing.T) {
	t.Parallel()
	eachMoxDirection(t, func(t *testing.T, p *mixedPair) {
		p.src.load(t, imaptest.Corpus{Messages: numbered(10)})
		p.run(t)
		p.src.load(t, imaptest.Corpus{Messages: numbered(10)[3:4]})
		if res := p.run(t); res.MessagesCopied != 1 {
			t.Errorf("copied %d, want the newcomer", res.MessagesCopied)
		}
		p.wantExact(t)
	})
}
