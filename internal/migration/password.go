package migration

import "log/slog"

// Password is a mailbox password. It is write-only: it prints, logs and
// marshals as REDACTED, so that it cannot leak through a format verb, a
// log attribute or an encoded struct by accident. string(p) reveals it,
// for the one place that needs it (logging in to a server).
type Password string

const redacted = "REDACTED"

func (Password) String() string   { return redacted }
func (Password) GoString() string { return `"` + redacted + `"` }

// LogValue implements slog.LogValuer.
func (Password) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON implements json.Marshaler.
func (Password) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
