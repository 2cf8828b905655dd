package imaptest

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
)

var moxUsers = map[string]string{"alice@mox.test": "alice-secret", "bob@other.test": "bob-secret"}

func TestMoxStartLoginAndRefuse(t *testing.T) {
	t.Parallel()
	start := time.Now()
	m := StartMox(t, MoxOptions{Users: moxUsers})
	t.Logf("mox %s started in %v on %s in %s", MoxVersion, time.Since(start), m.Addr(), m.Dir)
	if m.Host != "127.0.0.1" || m.Port == 0 {
		t.Fatalf("address: %+v", m)
	}
	for login, password := range moxUsers {
		c := m.Login(t, login, password)
		caps, err := c.Capability().Wait()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: post-login CAPABILITY: %s", login, capList(caps))
	}
	assertMoxLoginRefused(t, m, "alice@mox.test", "bob-secret")
	assertMoxLoginRefused(t, m, "carol@mox.test", "alice-secret")
}

func assertMoxLoginRefused(t *testing.T, m *Mox, login, password string) {
	t.Helper()
	err := m.Dial(t).Login(login, password).Wait()
	var imapErr *imap.Error
	if !errors.As(err, &imapErr) || imapErr.Code != imap.ResponseCodeAuthenticationFailed {
		t.Fatalf("LOGIN %s/%s: got %v, want NO [AUTHENTICATIONFAILED]", login, password, err)
	}
}

// A new mox account: namespace "" with "/" (RFC 2342), INBOX and the
// special-use folders, all subscribed and empty.
func TestMoxNewAccount(t *testing.T) {
	t.Parallel()
	m := StartMox(t, MoxOptions{Users: moxUsers})
	ns, err := m.Login(t, "alice@mox.test", "alice-secret").Namespace().Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(ns.Personal) != 1 || ns.Personal[0].Prefix != "" || ns.Personal[0].Delim != '/' {
		t.Errorf("NAMESPACE personal %+v, want prefix \"\" and delimiter \"/\"", ns.Personal)
	}
	for _, diff := range Diff(MoxStored(Corpus{}), m.Read(t, "alice@mox.test")) {
		t.Error(diff)
	}
}

func TestMoxLoadReadsBackExactly(t *testing.T) {
	t.Parallel()
	corpus := BuildCorpus(CorpusOptions{Seed: 42, Messages: 80, LargeMessages: 2, LargeSize: 300 << 10})
	m := StartMox(t, MoxOptions{Users: moxUsers})
	start := time.Now()
	m.Load(t, "alice@mox.test", corpus)
	t.Logf("loaded %d messages in %v", len(corpus.Messages), time.Since(start))
	got := m.Read(t, "alice@mox.test")
	for _, diff := range Diff(MoxStored(corpus), got) {
		t.Error(diff)
	}
	checkOrder(t, corpus, got)
	if other := m.Read(t, "bob@other.test"); len(other.Messages) != 0 {
		t.Errorf("bob has %d messages, want none", len(other.Messages))
	}
}

func TestMoxStopLeavesNothing(t *testing.T) {
	t.Parallel()
	var pid int
	var dir string
	t.Run("run", func(t *testing.T) {
		m := StartMox(t, MoxOptions{Users: moxUsers})
		pid, dir = m.proc.cmd.Process.Pid, m.Dir
		c := m.Login(t, "alice@mox.test", "alice-secret") // a session, busy
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatal(err)
		}
	})
	if members := groupMembers(pid); len(members) > 0 {
		t.Errorf("processes %v outlived the test", members)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s not removed: %v", dir, err)
	}
}

func TestMoxInstancesRunSideBySide(t *testing.T) {
	t.Parallel()
	a := StartMox(t, MoxOptions{Users: map[string]string{"alice@mox.test": "password-a"}})
	b := StartMox(t, MoxOptions{Users: map[string]string{"alice@mox.test": "password-b"}})
	a.Login(t, "alice@mox.test", "password-a")
	b.Login(t, "alice@mox.test", "password-b")
	assertMoxLoginRefused(t, b, "alice@mox.test", "password-a")
}

func TestMoxUsersChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		users map[string]string
		ok    bool
	}{
		{map[string]string{"alice@mox.test": "12345678"}, true},
		{map[string]string{"a.b-c_d@x-y.example.org": "long enough"}, true},
		{nil, false},
		{map[string]string{"alice": "12345678"}, false},
		{map[string]string{"Alice@mox.test": "12345678"}, false},
		{map[string]string{"alice@mox.test": "short"}, false},
		{map[string]string{"alice@mox.test": "two\nlines"}, false},
		{map[string]string{"al ice@mox.test": "12345678"}, false},
	}
	for _, tt := range tests {
		if err := checkMoxUsers(tt.users); (err == nil) != tt.ok {
			t.Errorf("checkMoxUsers(%q) = %v, want ok %v", tt.users, err, tt.ok)
		}
	}
}
