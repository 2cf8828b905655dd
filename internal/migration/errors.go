package migration

import (
	"errors"
	"fmt"
)

// ErrNotFound means the addressed resource does not exist.
var ErrNotFound = errors.New("not found")

// InvalidError reports a field that breaks a rule. Its text is the whole
// message a client sees, e.g. "tls_mode must be ssl|starttls|plain".
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return e.Field + " " + e.Reason }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// EndpointInUseError refuses to delete an endpoint that tasks still use.
type EndpointInUseError struct {
	Tasks int64
}

func (e *EndpointInUseError) Error() string {
	if e.Tasks == 1 {
		return "endpoint is used by 1 task"
	}
	return fmt.Sprintf("endpoint is used by %d tasks", e.Tasks)
}
