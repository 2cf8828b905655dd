package migration

import (
	"fmt"
	"io"
	"log/slog"
)

// Password is a mailbox password. It is write-only: it prints, logs and
// marshals as REDACTED, so that it cannot leak through a format verb, a
// log attribute or an encoded struct by accident. string(p) reveals it,
// for the one place that needs it (logging in to a server).
type Password string

const redacted = "REDACTED"

func (Password) String() string   { return redacted }
func (Password) GoString() string { return `"` + redacted + `"` }

// Format implements fmt.Formatter. Without it fmt prints the operand of a
// verb that does not fit a string, such as %d, raw.
func (Password) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v', 's', 'q', 'x', 'X': // as a string, with its flags and width
		fmt.Fprintf(f, fmt.FormatString(f, verb), redacted)
	default:
		io.WriteString(f, redacted) //nolint:errcheck // fmt reports nothing either
	}
}

// LogValue implements slog.LogValuer.
func (Password) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON implements json.Marshaler.
func (Password) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
