package transfer

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// fixedToken hands out one access token.
type fixedToken string

func (t fixedToken) Token(context.Context) (string, error) { return string(t), nil }

// fakeTokenSieve is a ManageSieve server that takes XOAUTH2 alone, with
// one token for one user, and lists one script: enough to prove that a
// side logging in with OAuth 2.0 reaches its scripts. It answers each
// connection's AUTHENTICATE and LISTSCRIPTS, and says what it was sent.
func fakeTokenSieve(t *testing.T, user, token string) (port int, sent chan string) {
	t.Helper()
	sent = make(chan string, 16)
	_, port = imaptest.StartScripted(t, func(conn net.Conn) {
		r := bufio.NewReader(conn)
		fmt.Fprint(conn, "\"IMPLEMENTATION\" \"fake\"\r\n\"SASL\" \"XOAUTH2\"\r\n\"SIEVE\" \"fileinto\"\r\nOK \"ready\"\r\n")
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			sent <- line
			switch {
			case strings.HasPrefix(line, `AUTHENTICATE "XOAUTH2" "`):
				response, _ := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(line, `AUTHENTICATE "XOAUTH2" "`), `"`))
				if string(response) != "user="+user+"\x01auth=Bearer "+token+"\x01\x01" {
					fmt.Fprint(conn, "NO \"the token was refused\"\r\n")
					continue
				}
				fmt.Fprint(conn, "OK \"logged in\"\r\n")
			case line == "LISTSCRIPTS":
				fmt.Fprint(conn, "\"out of office\" ACTIVE\r\nOK\r\n")
			case line == "LOGOUT":
				fmt.Fprint(conn, "OK\r\n")
				return
			default:
				fmt.Fprint(conn, "NO \"not here\"\r\n")
			}
		}
	})
	return port, sent
}

// TestSieveLoginWithAToken: a side that logs in with OAuth 2.0 takes its
// token to ManageSieve as to IMAP (XOAUTH2 with the account as user), and
// a refused token is a refusal in the server's words.
func TestSieveLoginWithAToken(t *testing.T) {
	t.Parallel()
	port, sent := fakeTokenSieve(t, "ann@example.com", "ya29.good")
	side := imapconn.Side{Server: imapconn.Server{Host: "127.0.0.1"}, Login: "ann@example.com", Token: fixedToken("ya29.good"),
		Sieve: imapconn.SieveService{Port: port, Security: imapconn.SecurityPlain}}
	c, err := dialSieve(t.Context(), &side, Tuning{GreetingTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("a token login: %v (the server was sent %q)", err, <-sent)
	}
	scripts, err := c.ListScripts()
	c.Close()
	if err != nil || len(scripts) != 1 || scripts[0].Name != "out of office" || !scripts[0].Active {
		t.Errorf("the scripts after a token login: %+v, %v", scripts, err)
	}

	side.Token = fixedToken("ya29.revoked")
	if _, err := dialSieve(t.Context(), &side, Tuning{GreetingTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}); err == nil ||
		!strings.Contains(err.Error(), "the token was refused") {
		t.Errorf("a refused token: %v, want the server's words", err)
	}
}
