package transfer

import (
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// TestMasterLoginsActForTheAccount migrates an account whose passwords
// nobody knows: an administrator logs in on its behalf on each side, with
// SASL PLAIN and the account as authorization identity, or as
// "account*master" (Dovecot master users), each form on each side, the
// destination's APPEND connection too. The copies are exact; a wrong
// master password is an authentication failure, at once.
func TestMasterLoginsActForTheAccount(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash,
		Users: map[string]string{"alice": "her-own-secret"}, MasterUsers: map[string]string{"admin": "master-pw"}})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox,
		Users: map[string]string{"alice": "unknown-too", "alice2": "unknown-three"}, MasterUsers: map[string]string{"migrator": "other-master-pw"}})
	src.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: 6}))
	source := dovecotSide(src, "alice", "master-pw")
	source.Master, source.MasterForm = "admin", imapconn.MasterAuthzid
	destination := dovecotSide(dst, "alice", "other-master-pw")
	destination.Master, destination.MasterForm = "migrator", imapconn.MasterSeparator

	for _, side := range []struct {
		name string
		side imapconn.Side
	}{{"source", source}, {"destination", destination}} {
		if err := CheckLogin(t.Context(), side.side, side.name, Tuning{}); err != nil {
			t.Errorf("%s master login: %v", side.name, err)
		}
	}
	migrateVerified(t, Job{Source: source, Destination: destination, State: syncstate.NewMemoryState()})
	if diff := imaptest.Diff(src.Read(t, "alice"), dst.Read(t, "alice")); len(diff) > 0 {
		t.Fatalf("alice differs:\n%s", strings.Join(diff, "\n"))
	}
	// The forms swapped, into another account.
	source.MasterForm, destination.MasterForm, destination.Login = imapconn.MasterSeparator, imapconn.MasterAuthzid, "alice2"
	migrateVerified(t, Job{Source: source, Destination: destination, State: syncstate.NewMemoryState()})
	if diff := imaptest.Diff(src.Read(t, "alice"), dst.Read(t, "alice2")); len(diff) > 0 {
		t.Fatalf("alice2 differs:\n%s", strings.Join(diff, "\n"))
	}

	wrong := source
	wrong.Password = "her-own-secret" // the account's, not the master's
	if err := CheckLogin(t.Context(), wrong, "source", Tuning{}); imapconn.KindOf(err) != imapconn.KindAuth {
		t.Errorf("a master login with the account's password: %v, want an authentication failure", err)
	}
}

// TestMasterLoginRefusedByTheServer: a server that does not take an
// authorization identity (go-imap's in-memory server answers NO
// [AUTHORIZATIONFAILED]) fails the login as an authentication failure,
// with the server's words: never retried, never taken for a network fault.
func TestMasterLoginRefusedByTheServer(t *testing.T) {
	t.Parallel()
	srv := startMemServer(t, map[string]string{"a": "pw"})
	side := srv.side("a", "pw")
	side.Master, side.MasterForm = "admin", imapconn.MasterAuthzid
	err := CheckLogin(t.Context(), side, "source", Tuning{})
	if imapconn.KindOf(err) != imapconn.KindAuth || err == nil || !strings.Contains(err.Error(), "SASL identity not supported") {
		t.Errorf("a master login the server refuses: %v (kind %v)", err, imapconn.KindOf(err))
	}
}

// TestLoginWithoutAPasswordIsNotTried: an account imported for a master
// login whose endpoint has none now fails as an authentication problem
// that says what to set, without a LOGIN the server would count against
// the account.
func TestLoginWithoutAPasswordIsNotTried(t *testing.T) {
	t.Parallel()
	srv := startMemServer(t, map[string]string{"a": "pw"})
	err := CheckLogin(t.Context(), srv.side("a", ""), "source", Tuning{})
	if imapconn.KindOf(err) != imapconn.KindAuth || err == nil || !strings.Contains(err.Error(), "no password is stored for this login") {
		t.Errorf("a login without a password: %v (kind %v)", err, imapconn.KindOf(err))
	}
}
