package migration

import (
	"context"
	"net"
	"slices"
	"strconv"
)

// TLSMode says how a connection to an IMAP server is secured.
type TLSMode string

// The connection security modes of an endpoint.
const (
	TLSModeSSL      TLSMode = "ssl"      // TLS from the first byte (RFC 8314)
	TLSModeSTARTTLS TLSMode = "starttls" // plain, then STARTTLS (RFC 9051 §6.2.1)
	TLSModePlain    TLSMode = "plain"    // no encryption
)

// DefaultPort is the IMAP port a mode uses when an endpoint names none.
func (m TLSMode) DefaultPort() int {
	if m == TLSModeSSL {
		return 993
	}
	return 143
}

// TLSModes are every TLSMode, in the order the API lists them.
var TLSModes = []TLSMode{TLSModeSSL, TLSModeSTARTTLS, TLSModePlain}

func (m TLSMode) valid() bool { return slices.Contains(TLSModes, m) }

// Limits on the text fields of an endpoint.
const (
	MaxLabelBytes = 1024
	MaxHostBytes  = 253 // RFC 1035 §2.3.4, as written in text
)

// Endpoint is an IMAP server that tasks migrate from or to.
type Endpoint struct {
	ID            int64
	RoleLabel     string
	Host          string
	Port          int
	TLSMode       TLSMode
	TLSSkipVerify bool
}

// Address is the endpoint's host:port.
func (e Endpoint) Address() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// Normalize checks e and fills in the default port. The spec validates only
// tls_mode; the length and port bounds keep bad input out of the store.
func (e *Endpoint) Normalize() error {
	if !e.TLSMode.valid() {
		return invalid("tls_mode", "must be ssl|starttls|plain")
	}
	if e.Port < 0 || e.Port > 65535 {
		return invalid("port", "must be between 1 and 65535, or 0 for the default of tls_mode")
	}
	if e.Port == 0 {
		e.Port = e.TLSMode.DefaultPort()
	}
	if err := checkText("role_label", e.RoleLabel, MaxLabelBytes); err != nil {
		return err
	}
	return checkText("host", e.Host, MaxHostBytes)
}

// EndpointStore keeps endpoints. Missing ids answer ErrNotFound; deleting an
// endpoint that tasks use answers *EndpointInUseError.
type EndpointStore interface {
	EndpointCreate(ctx context.Context, e Endpoint) (int64, error)
	EndpointGet(ctx context.Context, id int64) (Endpoint, error)
	EndpointList(ctx context.Context) ([]Endpoint, error)
	EndpointUpdate(ctx context.Context, e Endpoint) error
	EndpointDelete(ctx context.Context, id int64) error
}
