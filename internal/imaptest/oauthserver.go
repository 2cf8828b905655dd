package imaptest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
)

// OAuthServer is an in-memory IMAP server that takes only OAuth 2.0
// bearer tokens, as Microsoft 365 does with basic authentication off:
//   - AUTHENTICATE XOAUTH2 ("user=…^Aauth=Bearer …^A^A", Google's "OAuth
//     2.0 Mechanism" page and Microsoft's "Authenticate an IMAP, POP or SMTP
//     connection using OAuth") and OAUTHBEARER (RFC 7628); LOGIN is refused.
//   - A token the TokenServer did not issue, or issued for another user,
//     fails with the mechanisms' error challenge (base64 JSON with
//     "status":"401") and then NO AUTHENTICATE failed.
//   - An application's token (client_credentials) acts for any mailbox,
//     as an Exchange Online service principal given FullAccess does.
//   - When the token a session logged in with expires, the session's next
//     command gets "* BYE Session invalidated - AccessTokenExpired" and the
//     connection closes, as Exchange Online does.
//   - ThrottleAppends answers chosen APPENDs with Exchange Online's
//     throttling answer, "NO Request is throttled. Suggested Backoff Time:
//     N milliseconds", storing nothing, and ends the session at its next
//     command (Microsoft's "Exchange Online limits" and the IMAP
//     throttling its support articles describe).
type OAuthServer struct {
	Host string
	Port int

	tokens      *TokenServer
	mu          sync.Mutex
	users       map[string]*imapmemserver.User // by lower-case login
	invalidated int                            // sessions ended for an expired token
	appends     int                            // APPENDs received, throttled ones too
	throttle    map[int]bool                   // the APPENDs (1-based) to throttle
	backoff     time.Duration
	throttled   int
	// throttleAnswer replaces Exchange Online's throttling answer, and
	// throttleBye sends it as a BYE.
	throttleAnswer *imap.Error
	throttleBye    bool
	refuseOnly     bool
}

// OAuthServerOptions shape an OAuthServer.
type OAuthServerOptions struct {
	// Users are the mailboxes, each with an empty INBOX.
	Users []string
	// Caps are announced besides AUTH=XOAUTH2, AUTH=OAUTHBEARER and
	// SASL-IR; IMAP4rev1, NAMESPACE, UIDPLUS, MOVE and IDLE when nil
	// (Microsoft 365's, which has no LITERAL+).
	Caps imap.CapSet
	// ThrottleAppends are the APPENDs, counted from 1 across sessions,
	// that get the throttling answer with Backoff as the suggestion.
	ThrottleAppends []int
	Backoff         time.Duration
	// ThrottleBye: those APPENDs get no answer; the server sends
	// "* BYE" with ThrottleAnswer's code and words and closes, as a
	// server that sheds load does.
	ThrottleBye bool
	// ThrottleAnswer, when set, is the answer those APPENDs get instead
	// of Exchange Online's: another server's pushback, or a refusal.
	ThrottleAnswer *imap.Error
	// RefuseOnly: those APPENDs are refused and the session goes on, as
	// for a message the server will not take.
	RefuseOnly bool
}

// StartOAuthServer runs an OAuthServer that checks tokens with tokens,
// until t ends.
func StartOAuthServer(t testing.TB, tokens *TokenServer, opts OAuthServerOptions) *OAuthServer {
	t.Helper()
	s := &OAuthServer{tokens: tokens, users: map[string]*imapmemserver.User{}, throttle: map[int]bool{}, backoff: opts.Backoff,
		throttleAnswer: opts.ThrottleAnswer, throttleBye: opts.ThrottleBye, refuseOnly: opts.RefuseOnly}
	for _, n := range opts.ThrottleAppends {
		s.throttle[n] = true
	}
	for _, login := range opts.Users {
		// The in-memory user's own password is never used: LOGIN is off.
		u := imapmemserver.NewUser(login, "unused-"+login)
		if err := u.Create("INBOX", nil); err != nil {
			t.Fatal(err)
		}
		s.users[strings.ToLower(login)] = u
	}
	caps := opts.Caps
	if caps == nil {
		caps = imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapNamespace: {}, imap.CapUIDPlus: {}, imap.CapMove: {}, imap.CapIdle: {}}
	}
	caps = caps.Copy()
	for _, c := range []imap.Cap{imap.AuthCap("XOAUTH2"), imap.AuthCap(sasl.OAuthBearer), imap.CapSASLIR} {
		caps[c] = struct{}{}
	}
	addr := serveSessions(t, caps, func(conn *imapserver.Conn) imapserver.Session { return &oauthSession{server: s, conn: conn} })
	s.Host, s.Port = addr.IP.String(), addr.Port
	return s
}

// Deliver puts a message in login's mailbox, as mail delivery would.
func (s *OAuthServer) Deliver(t testing.TB, login, mailbox string, message []byte) {
	t.Helper()
	u := s.user(login)
	if u == nil {
		t.Fatalf("imaptest: no user %q", login)
	}
	if _, err := u.Append(mailbox, literal{bytes.NewReader(message)}, &imap.AppendOptions{}); err != nil {
		t.Fatalf("imaptest: deliver to %s %s: %v", login, mailbox, err)
	}
}

// Count is how many messages login's mailbox holds.
func (s *OAuthServer) Count(t testing.TB, login, mailbox string) int {
	t.Helper()
	u := s.user(login)
	if u == nil {
		t.Fatalf("imaptest: no user %q", login)
	}
	status, err := u.Status(mailbox, &imap.StatusOptions{NumMessages: true})
	if err != nil {
		t.Fatalf("imaptest: status of %s %s: %v", login, mailbox, err)
	}
	return int(*status.NumMessages)
}

// Throttled counts the APPENDs answered with the throttling answer.
func (s *OAuthServer) Throttled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.throttled
}

// throttleNext says whether the APPEND now received is one to throttle.
func (s *OAuthServer) throttleNext() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends++
	if !s.throttle[s.appends] {
		return false
	}
	s.throttled++
	return true
}

// Invalidated counts the sessions ended because their token expired.
func (s *OAuthServer) Invalidated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.invalidated
}

func (s *OAuthServer) user(login string) *imapmemserver.User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[strings.ToLower(login)]
}

type literal struct{ *bytes.Reader }

func (l literal) Size() int64 { return l.Reader.Size() }

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// oauthSession is one connection: unauthenticated until a token opens a
// mailbox's session.
type oauthSession struct {
	*imapmemserver.UserSession // nil until authenticated
	server                     *OAuthServer
	conn                       *imapserver.Conn
	expires                    time.Time
	dropped                    bool // throttled: the next command ends the session
}

var errLoginDisabled = &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAuthenticationFailed, Text: "LOGIN failed."}

func (s *oauthSession) Login(string, string) error { return errLoginDisabled }

func (s *oauthSession) Close() error {
	if s.UserSession == nil {
		return nil
	}
	return s.UserSession.Close()
}

func (s *oauthSession) AuthenticateMechanisms() []string {
	return []string{"XOAUTH2", sasl.OAuthBearer}
}

func (s *oauthSession) Authenticate(mech string) (sasl.Server, error) {
	switch mech {
	case "XOAUTH2":
		return &xoauth2Server{session: s}, nil
	case sasl.OAuthBearer:
		return sasl.NewOAuthBearerServer(func(opts sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			if !s.logIn(opts.Username, opts.Token) {
				return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
			}
			return nil
		}), nil
	}
	return nil, &imap.Error{Type: imap.StatusResponseTypeNo, Text: "Unsupported authentication mechanism."}
}

// logIn opens login's mailbox when token acts for it.
func (s *oauthSession) logIn(login, token string) bool {
	grant, ok := s.server.tokens.Check(token)
	u := s.server.user(login)
	if !ok || u == nil || (grant.User != "" && !strings.EqualFold(grant.User, login)) {
		return false
	}
	s.UserSession = imapmemserver.NewUserSession(u)
	s.expires = grant.Expires
	return true
}

// xoauth2Server reads XOAUTH2's one message; a refusal sends the error
// challenge and waits for the client's empty answer before failing.
type xoauth2Server struct {
	session *oauthSession
	refused bool
}

var errAuthenticateFailed = &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAuthenticationFailed, Text: "AUTHENTICATE failed."}

func (x *xoauth2Server) Next(response []byte) ([]byte, bool, error) {
	if x.refused {
		return nil, true, errAuthenticateFailed
	}
	if response == nil {
		return []byte{}, false, nil // no initial response: ask for it
	}
	var login, token string
	for _, field := range strings.Split(string(response), "\x01") {
		switch {
		case strings.HasPrefix(field, "user="):
			login = strings.TrimPrefix(field, "user=")
		case strings.HasPrefix(field, "auth=Bearer "):
			token = strings.TrimPrefix(field, "auth=Bearer ")
		}
	}
	if x.session.logIn(login, token) {
		return nil, true, nil
	}
	x.refused = true
	return []byte(`{"status":"401","schemes":"bearer","scope":"https://outlook.office365.com/.default"}`), false, nil
}

// alive ends a session whose token has expired, as Exchange Online does.
func (s *oauthSession) alive() error {
	if s.dropped {
		s.conn.Bye("Connection is throttled") //nolint:errcheck // the connection ends either way
		return errors.New("the session was throttled")
	}
	if time.Now().Before(s.expires) {
		return nil
	}
	s.server.mu.Lock()
	s.server.invalidated++
	s.server.mu.Unlock()
	s.conn.Bye("Session invalidated - AccessTokenExpired") //nolint:errcheck // the connection ends either way
	return fmt.Errorf("session invalidated: the access token expired at %s", s.expires.Format(time.TimeOnly))
}

func (s *oauthSession) Select(name string, options *imap.SelectOptions) (*imap.SelectData, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return s.UserSession.Select(name, options)
}

func (s *oauthSession) Status(name string, options *imap.StatusOptions) (*imap.StatusData, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return s.UserSession.Status(name, options)
}

func (s *oauthSession) List(w *imapserver.ListWriter, ref string, patterns []string, options *imap.ListOptions) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.UserSession.List(w, ref, patterns, options)
}

func (s *oauthSession) Append(mailbox string, r imap.LiteralReader, options *imap.AppendOptions) (*imap.AppendData, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	if s.server.throttleNext() {
		io.Copy(io.Discard, r) //nolint:errcheck // the literal is read and dropped
		s.dropped = !s.server.refuseOnly
		if a := s.server.throttleAnswer; a != nil && s.server.throttleBye {
			s.conn.Bye(fmt.Sprintf("[%s] %s", a.Code, a.Text)) //nolint:errcheck // the connection ends either way
			return nil, errors.New("the session was shed")
		}
		if s.server.throttleAnswer != nil {
			return nil, s.server.throttleAnswer
		}
		return nil, &imap.Error{Type: imap.StatusResponseTypeNo,
			Text: fmt.Sprintf("Request is throttled. Suggested Backoff Time: %d milliseconds", s.server.backoff.Milliseconds())}
	}
	return s.UserSession.Append(mailbox, r, options)
}

func (s *oauthSession) Fetch(w *imapserver.FetchWriter, numSet imap.NumSet, options *imap.FetchOptions) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.UserSession.Fetch(w, numSet, options)
}
