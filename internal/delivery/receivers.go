package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// A webhook's URL is chosen by whoever sets the task's webhook, and the
// service calls it from inside the network it runs in: left alone, a
// webhook reaches the service itself (a call on its own /run looped
// passes), a cloud's metadata address, or any host of the hosting
// company's internal network. So a webhook goes to a public address,
// checked on the address actually dialed, after resolution (a name that
// resolves to an internal address later, DNS rebinding, is caught too),
// unless the operator named the receiver as an allowed internal host.

// ErrInternalReceiver refuses a webhook call to an internal address.
var ErrInternalReceiver = errors.New("refused: the receiver is an internal address (loopback, private, link-local); " +
	"allow it with MAILMIGRATE_WEBHOOK_ALLOWED_HOSTS (--webhook-allowed-hosts)")

// ErrOwnReceiver refuses a webhook call to one of this machine's own
// addresses, public ones included: the call would reach the service
// itself, or whatever else this machine serves.
var ErrOwnReceiver = errors.New("refused: the receiver is this machine's own address; " +
	"allow it with MAILMIGRATE_WEBHOOK_ALLOWED_HOSTS (--webhook-allowed-hosts)")

// machineAddresses are the addresses of this machine's interfaces, read at
// each call: they change as interfaces come and go.
func machineAddresses() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if prefix, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, prefix.Addr().Unmap())
		}
	}
	return out
}

// cgnat is the shared address space of RFC 6598, internal too.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// internalAddress reports whether ip is not on the public internet.
func internalAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || cgnat.Contains(ip)
}

// receiverDialer dials webhook receivers: a host in allowed (by name or
// address, case aside; "*" allows any) as it is, any other only at a
// public address that is not one of own (this machine's), which it dials
// by number so that the address checked is the one used.
func receiverDialer(allowed []string, own func() []netip.Addr) func(ctx context.Context, network, addr string) (net.Conn, error) {
	allow := map[string]bool{}
	for _, host := range allowed {
		allow[strings.ToLower(strings.Trim(host, "[]"))] = true
	}
	dialer := &net.Dialer{Timeout: webhookTimeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if allow["*"] || allow[strings.ToLower(host)] {
			return dialer.DialContext(ctx, network, addr)
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		mine := own()
		for _, ip := range ips {
			switch {
			case internalAddress(ip):
				return nil, fmt.Errorf("%s (%s): %w", host, ip.Unmap(), ErrInternalReceiver)
			case slices.Contains(mine, ip.Unmap()):
				return nil, fmt.Errorf("%s (%s): %w", host, ip.Unmap(), ErrOwnReceiver)
			}
		}
		return dialer.DialContext(ctx, network, net.JoinHostPort(ips[0].Unmap().String(), port))
	}
}
