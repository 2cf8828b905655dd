package worker

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// stringer is a fmt.Stringer that says its text.
type stringer string

func (s stringer) String() string { return string(s) }

// TestTheEnginesLogIsScrubbed: whatever a record carries the password in,
// its message, a string, an error, a Stringer, bytes, a group or an
// attribute set before, the log never holds it; other values stay.
func TestTheEnginesLogIsScrubbed(t *testing.T) {
	const password = "Hunter2-secret-pw"
	var out bytes.Buffer
	logger := scrubbedLogger(slog.New(slog.NewTextHandler(&out, nil)), []string{password}).With("login", "ann "+password)
	logger.Warn("migration interrupted; reconnecting: NO LOGIN ann "+password,
		"err", errors.New(`NO [AUTHENTICATIONFAILED] refused: LOGIN ann "`+password+`"`),
		"words", stringer("BYE "+password), "raw", []byte(password),
		slog.Group("server", "said", password, "port", 143), "attempt", 2)
	logged := out.String()
	if strings.Contains(logged, password) {
		t.Errorf("the log holds the password:\n%s", logged)
	}
	for _, kept := range []string{"attempt=2", "server.port=143", "migration interrupted; reconnecting", "AUTHENTICATIONFAILED"} {
		if !strings.Contains(logged, kept) {
			t.Errorf("the log lost %q:\n%s", kept, logged)
		}
	}
}
