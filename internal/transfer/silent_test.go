package transfer

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// silentAfterLogin is a server that greets and takes the login, then
// reads commands and answers none of them: a server that hung.
func silentAfterLogin(t *testing.T) imapconn.Side {
	t.Helper()
	host, port := imaptest.StartScripted(t, answerLoginOnly)
	return imapconn.Side{Server: imapconn.Server{Host: host, Port: port, Security: imapconn.SecurityPlain}, Login: "a", Password: "pw"}
}

func answerLoginOnly(conn net.Conn) {
	conn.Write([]byte("* OK [CAPABILITY IMAP4rev1 LITERAL+] ready\r\n"))
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		tag, command, _ := strings.Cut(line, " ")
		if strings.HasPrefix(strings.ToUpper(command), "LOGIN") {
			conn.Write([]byte(tag + " OK [CAPABILITY IMAP4rev1 LITERAL+ NAMESPACE] logged in\r\n"))
		}
	}
}

// Case 9 of the re-run cases: a server that stops answering fails the
// attempt within the configured idle timeout, not a multiple of it.
func TestSilentServerFailsWithinTheIdleTimeout(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond
	dst := startMemServer(t, map[string]string{"a": "pw"})
	start := time.Now()
	_, err := Migrate(t.Context(), Job{Source: silentAfterLogin(t), Destination: dst.side("a", "pw"),
		Tuning: Tuning{IdleTimeout: idle, Tries: 1}})
	elapsed := time.Since(start)
	if err == nil || imapconn.KindOf(err) != imapconn.KindTransient {
		t.Fatalf("error %v, want a transient failure of the silent server", err)
	}
	if elapsed >= 3*idle { // go-imap's decoder used to wait it out four times

		t.Errorf("took %s to notice a server silent for more than %s", elapsed, idle)
	}
	t.Logf("a silent server failed the attempt after %s (idle timeout %s): %v", elapsed.Round(time.Millisecond), idle, err)
}
