package delivery

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
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
	dial := receiverDialer([]string{"allowed.localhost"}, machineAddresses)
	for _, addr := range []string{"localhost:1", "127.0.0.1:1", "[::1]:1", "169.254.169.254:80"} {
		if _, err := dial(t.Context(), "tcp", addr); !errors.Is(err, ErrInternalReceiver) {
			t.Errorf("dial %s: %v, want ErrInternalReceiver", addr, err)
		}
	}
	// Allowed: dialed as it is (nothing listens on port 1: refused by the
	// system, not by the guard).
	if _, err := receiverDialer([]string{"127.0.0.1"}, machineAddresses)(t.Context(), "tcp", "127.0.0.1:1"); err == nil || errors.Is(err, ErrInternalReceiver) {
		t.Errorf("an allowed receiver: %v, want the system's refusal", err)
	}
}

// TestReceiverDialerRefusesThisMachine: a public address of this machine's
// own is refused before any connection (the call would reach the service
// itself), unless the operator allowed it; other public addresses are
// dialed.
func TestReceiverDialerRefusesThisMachine(t *testing.T) {
	t.Parallel()
	own := func() []netip.Addr {
		return []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}
	}
	for _, addr := range []string{"192.0.2.10:443", "[2001:db8::10]:443", "[::ffff:192.0.2.10]:443"} {
		if _, err := receiverDialer(nil, own)(t.Context(), "tcp", addr); !errors.Is(err, ErrOwnReceiver) {
			t.Errorf("dial %s: %v, want ErrOwnReceiver", addr, err)
		}
	}
	// Allowed: dialed (an unroutable test address: given up at once).
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := receiverDialer([]string{"192.0.2.10"}, own)(ctx, "tcp", "192.0.2.10:443"); errors.Is(err, ErrOwnReceiver) {
		t.Errorf("an allowed own address was refused: %v", err)
	}
	if len(machineAddresses()) == 0 {
		t.Error("no address of this machine was read: the guard would guard nothing")
	}
}
