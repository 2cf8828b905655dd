package delivery

import (
	"errors"
	"net/netip"
	"testing"
)

// TestInternalAddresses: what a webhook may not reach unless allowed.
func TestInternalAddresses(t *testing.T) {
	t.Parallel()
	for addr, internal := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "172.16.0.9": true, "192.168.1.1": true,
		"169.254.169.254": true, "fe80::1": true, "fd00::5": true, "100.64.0.1": true, "0.0.0.0": true,
		"::ffff:127.0.0.1": true, "224.0.0.1": true,
		"93.184.216.34": false, "2606:4700::1111": false, "100.128.0.1": false,
	} {
		if got := internalAddress(netip.MustParseAddr(addr)); got != internal {
			t.Errorf("internalAddress(%s) = %v, want %v", addr, got, internal)
		}
	}
}

// TestReceiverDialerRefusesInternalNames: a name that resolves to an
// internal address is refused before any connection, unless allowed.
func TestReceiverDialerRefusesInternalNames(t *testing.T) {
	t.Parallel()
	dial := receiverDialer([]string{"allowed.localhost"})
	for _, addr := range []string{"localhost:1", "127.0.0.1:1", "[::1]:1", "169.254.169.254:80"} {
		if _, err := dial(t.Context(), "tcp", addr); !errors.Is(err, ErrInternalReceiver) {
			t.Errorf("dial %s: %v, want ErrInternalReceiver", addr, err)
		}
	}
	// Allowed: dialed as it is (nothing listens on port 1: refused by the
	// system, not by the guard).
	if _, err := receiverDialer([]string{"127.0.0.1"})(t.Context(), "tcp", "127.0.0.1:1"); err == nil || errors.Is(err, ErrInternalReceiver) {
		t.Errorf("an allowed receiver: %v, want the system's refusal", err)
	}
}
