package transfer

import (
	"context"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// createRecorder is an in-memory session that records each CREATE with
// its special-use attributes, and can refuse them as a server would.
type createRecorder struct {
	*imapmemserver.UserSession // nil until Login
	user                       *imapmemserver.User
	log                        *createLog
}

func (s *createRecorder) Login(username, password string) error {
	if err := s.user.Login(username, password); err != nil {
		return err
	}
	s.UserSession = imapmemserver.NewUserSession(s.user)
	return nil
}

type createLog struct {
	mu         sync.Mutex
	refuseRole bool
	creates    map[string][]imap.MailboxAttr
}

func (s *createRecorder) Create(name string, options *imap.CreateOptions) error {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	if options != nil && len(options.SpecialUse) > 0 && s.log.refuseRole {
		return &imap.Error{Type: imap.StatusResponseTypeNo, Code: responseCodeUseAttr, Text: "no such role here"}
	}
	if options != nil {
		s.log.creates[name] = options.SpecialUse
	} else {
		s.log.creates[name] = nil
	}
	return s.UserSession.Create(name, options)
}

// startCreateRecorder runs a destination that announces CREATE-SPECIAL-USE.
func startCreateRecorder(t *testing.T, login, password string, refuseRole bool) (imapconn.Side, *createLog) {
	t.Helper()
	u := imapmemserver.NewUser(login, password)
	if err := u.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	log := &createLog{refuseRole: refuseRole, creates: map[string][]imap.MailboxAttr{}}
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &createRecorder{user: u, log: log}, nil, nil
		},
		Caps: imap.CapSet{
			imap.CapIMAP4rev1: {}, imap.CapNamespace: {}, imap.CapUIDPlus: {}, imap.CapListExtended: {},
			imap.CapSpecialUse: {}, imap.CapCreateSpecialUse: {},
		},
		InsecureAuth: true,
		Logger:       discardLogger{},
	})
	port := serveIMAP(t, srv).Port
	return imapconn.Side{Server: imapconn.Server{Host: "127.0.0.1", Port: port, Security: imapconn.SecurityPlain}, Login: login, Password: password}, log
}

// TestNewFoldersKeepTheirRole: a destination without a Sent folder that
// supports CREATE-SPECIAL-USE gets the source's Sent created as \Sent; one
// that refuses the role gets the folder all the same, without it. A
// folder without a role is created plainly.
func TestNewFoldersKeepTheirRole(t *testing.T) {
	t.Parallel()
	for _, refuse := range []bool{false, true} {
		src := startMemServer(t, map[string]string{"alice": "pw"})
		sc := src.client(t, "alice", "pw")
		for _, name := range []string{"Sent", "Projects"} {
			if err := sc.Create(name, nil).Wait(); err != nil {
				t.Fatal(err)
			}
			appendMessages(t, sc, name, testMessage{Body: mail(name+"@x", name, 10)})
		}
		dst, log := startCreateRecorder(t, "alice", "pw", refuse)
		res, err := Migrate(context.Background(), Job{Source: src.side("alice", "pw"), Destination: dst})
		if err != nil || res.MessagesCopied != 2 {
			t.Fatalf("refuse=%v: copied %d, %v", refuse, res.MessagesCopied, err)
		}
		sent, created := log.creates["Sent"]
		wantRole := []imap.MailboxAttr{imap.MailboxAttrSent}
		if refuse {
			wantRole = nil
		}
		if !created || len(sent) != len(wantRole) || (len(wantRole) > 0 && sent[0] != wantRole[0]) {
			t.Errorf("refuse=%v: Sent created %v with %v, want %v", refuse, created, sent, wantRole)
		}
		if roles, ok := log.creates["Projects"]; !ok || roles != nil {
			t.Errorf("refuse=%v: Projects created %v with %v, want no role", refuse, ok, roles)
		}
	}
}
