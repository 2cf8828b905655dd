package delivery

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// TestSMTPRepliesLeaveNoPassword: an SMTP server that refuses the login
// quoting what it was sent (the AUTH PLAIN line, the password too) reaches
// the delivery log without either; the reply keeps its code.
func TestSMTPRepliesLeaveNoPassword(t *testing.T) {
	const password = "Smtp-Secret-0123"
	host, port := imaptest.StartScripted(t, func(conn net.Conn) {
		r := bufio.NewReader(conn)
		fmt.Fprint(conn, "220 fake ESMTP\r\n")
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case strings.HasPrefix(line, "EHLO"):
				fmt.Fprint(conn, "250-fake\r\n250 AUTH PLAIN\r\n")
			case strings.HasPrefix(line, "AUTH"):
				fmt.Fprintf(conn, "535 5.7.8 refused: %s (password %s)\r\n", line, password)
			default:
				fmt.Fprint(conn, "221 bye\r\n")
				return
			}
		}
	})
	server, err := ParseMailServer("smtp+plain://mailer@"+net.JoinHostPort(host, strconv.Itoa(port)), password, "mailmigrate@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	err = server.send(t.Context(), []string{"it@acme.example"}, []byte("Subject: x\r\n\r\nx\r\n"))
	var reply *textproto.Error
	if !errors.As(err, &reply) || reply.Code != 535 {
		t.Fatalf("the refusal: %v, want the server's 535", err)
	}
	plain := base64.StdEncoding.EncodeToString([]byte("\x00mailer\x00" + password)) // as AUTH PLAIN sends it
	if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), plain) || !strings.Contains(err.Error(), "refused: AUTH PLAIN") {
		t.Errorf("the refusal's words %q hold the password, or lost the server's words", err)
	}
}
